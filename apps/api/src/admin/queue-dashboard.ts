import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import type { RequestHandler, Response, Router } from 'express';
import { KEY_ADMIN_PERMISSIONS } from '@proofline/identity-domain';
import { requireKey } from '@proofline/identity-feature';
import type { Authenticator } from '@proofline/identity-feature';
import { AppError } from '@proofline/shared-errors';
import { KEY_ADMIN, challengeHeader, problems, text } from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/** Sent with every 401 of the dashboard so a browser asks for credentials (RFC 7617). */
export const DASHBOARD_CHALLENGE = 'Basic realm="Proofline queues", charset="UTF-8"';

/** The dashboard's entry page is the documented operation; bull-board serves everything under it. */
export const QUEUE_DASHBOARD_ROUTES = routeTable({
  base: '',
  tag: 'Operations',
  routes: {
    queueDashboard: {
      method: 'get',
      path: QUEUE_DASHBOARD_PATH,
      mount: 'subtree',
      security: 'admin-ui',
      summary: 'The BullMQ queue dashboard (read-only bull-board UI).',
      description:
        'An Issuer_Admin or Verifier_Admin key, as x-api-key or, from a browser, as HTTP Basic credentials with the key as the password (any user name). Its pages and JSON under /admin/queues/ are bull-board’s own. Off with ADMIN_UI=false (404).',
      responses: { '200': text('The dashboard page.', 'text/html', '<!DOCTYPE html><html>…</html>') },
      errors: problems(KEY_ADMIN, {
        401: { codes: ['API_KEY_MISSING'], why: 'A browser is asked for credentials.', headers: challengeHeader },
      }),
    },
  },
});

/**
 * The BullMQ dashboard (bull-board) at `/admin/queues`, for an Issuer_Admin or Verifier_Admin
 * key only. A script sends the key as `x-api-key`; a browser as HTTP Basic credentials with the
 * key as the password (any user name): every 401 carries `WWW-Authenticate: Basic`, so the browser
 * asks once and resends them for every page and API call under the path. A valid key without an
 * admin permission is 403. Rate limits apply as on every keyed route.
 *
 * The board is read-only (bull-board's `readOnlyMode` on every queue): no retry, remove, clean,
 * pause or add from the browser. Jobs are the service's own bookkeeping (publication is
 * re-enqueued from the outbox, the block producer is a job scheduler); changing them by hand
 * bypasses the invariants the workers keep.
 *
 * Served with no internet: bull-board serves its UI bundle itself; the one external reference of
 * its page (a Google Fonts stylesheet) is removed, so the page falls back to system fonts.
 */
export function queueDashboard(
  authenticator: Pick<Authenticator, 'authenticate' | 'admission'>,
  queues: readonly Queue[],
): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: true })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Proofline queues' } },
  });
  const board = serverAdapter.getRouter() as RequestHandler & { disable?: (setting: string) => void };
  board.disable?.('x-powered-by');

  return mountRoutes(QUEUE_DASHBOARD_ROUTES, {
    queueDashboard: [
      basicToApiKey,
      challengeOn401(requireKey(authenticator, ...KEY_ADMIN_PERMISSIONS)),
      noExternalFonts,
      noStore,
      board,
    ],
  });
}

/** `Authorization: Basic base64(user:key)` → `x-api-key: key`, unless an x-api-key was sent. */
const basicToApiKey: RequestHandler = (req, _res, next) => {
  const auth = req.header('authorization');
  if (req.header('x-api-key') === undefined && auth !== undefined) {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(auth);
    if (m) {
      const decoded = Buffer.from(m[1] ?? '', 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const key = colon >= 0 ? decoded.slice(colon + 1) : '';
      if (key !== '') req.headers['x-api-key'] = key;
    }
  }
  next();
};

function challengeOn401(inner: RequestHandler): RequestHandler {
  return (req, res, next) => {
    void inner(req, res, (err?: unknown) => {
      if (err instanceof AppError && err.httpStatus === 401) res.setHeader('WWW-Authenticate', DASHBOARD_CHALLENGE);
      next(err);
    });
  };
}

const GOOGLE_FONTS = /<link[^>]+href="https:\/\/fonts\.googleapis\.com[^"]*"[^>]*>/g;

/** Drops the Google Fonts stylesheet from bull-board's page: the dashboard needs no internet. */
const noExternalFonts: RequestHandler = (_req, res, next) => {
  const send = res.send.bind(res) as (body?: unknown) => Response;
  res.send = ((body?: unknown) =>
    send(
      typeof body === 'string' && body.includes('fonts.googleapis.com') ? body.replace(GOOGLE_FONTS, '') : body,
    )) as Response['send'];
  next();
};

/** Job data is operational: no shared cache keeps it. */
const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};
