import type { IncomingMessage, ServerResponse } from 'node:http';
import { APP_VERSION } from '@proofline/shared-config';
import { STATUS_TITLES } from '@proofline/shared-errors';
import {
  bodyBeyondDiscard,
  corsHeaders,
  discardBody,
  isPreflight,
  PAGE_HEADERS,
  readBuiltPage,
  refusalProblem,
  requestIdOf,
} from '@proofline/shared-http';
import type { Logger } from '@proofline/shared-logger';
import { knownDown, pingMasters } from '@proofline/shared-redis';
import { logScope } from '@proofline/shared-logger';
import type { GraphQLMetrics } from './metrics';

type Handler = (req: IncomingMessage, res: ServerResponse) => unknown;

export interface EdgeOptions {
  /** The request-path Redis connection: `/readiness` pings it. */
  readonly redis: { ping(): Promise<string>; readonly status?: string };
  /** yoga (`(req, res) => yoga.handle(req, res)`); gets the body already read, within the limit. */
  readonly yoga: Handler;
  readonly logger: Logger;
  /** `CORS_ORIGINS`: empty = no CORS headers at all. */
  readonly corsOrigins: readonly string[];
  /** `GRAPHQL_MAX_BODY_BYTES`: larger bodies answer 413 CONTENT_LENGTH_LIMIT_EXCEEDED. */
  readonly maxBodyBytes: number;
  /** Request metrics; `/metrics` is served here unless `publicMetrics` is false (GRAPHQL_METRICS_PORT). */
  readonly metrics?: GraphQLMetrics;
  readonly publicMetrics?: boolean;
}

/**
 * An edge refusal (before yoga ran): problem+json like every other protocol-level refusal, that
 * also carries the GraphQL `errors` array so a GraphQL client reads it as it reads yoga's errors.
 * A body not read yet is drained after the answer (`discardBody`): a client still sending gets
 * the answer, not a reset.
 */
function sendError(req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const problem = refusalProblem({ status, errorCode: code, title: STATUS_TITLES[status] ?? 'Error', detail: message });
  const unread = !req.complete;
  const body = JSON.stringify({ ...problem, errors: [{ message, extensions: { code, status } }] });
  res
    .writeHead(status, {
      'content-type': 'application/problem+json',
      'content-length': Buffer.byteLength(body),
      ...(unread && bodyBeyondDiscard(req) ? { connection: 'close' } : {}),
    })
    .end(body);
  if (unread) discardBody(req);
}

/**
 * The GraphQL process's HTTP edge, the same rules as REST's: a request id (`x-request-id`, a
 * well-formed incoming one is echoed), one access-log line per request (info level: LOG_LEVEL=warn
 * turns it off), CORS only for `CORS_ORIGINS`, a body limit, `/metrics`, `/liveness` (process up),
 * `/readiness` (Redis answers: the facade reads everything from it), `/explorer` (the built page);
 * everything else to yoga.
 */
export function httpHandler(options: EdgeOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { redis, yoga, logger, corsOrigins, maxBodyBytes, metrics } = options;
  const publicMetrics = metrics !== undefined && options.publicMetrics !== false;
  return (req, res) => {
    const id = requestIdOf(req.headers['x-request-id']);
    // The context (context.ts) reads the id from the request: give it the well-formed one.
    req.headers['x-request-id'] = id;
    res.setHeader('x-request-id', id);
    metrics?.observe(req, res);
    if (logger.isLevelEnabled('info')) {
      const started = process.hrtime.bigint();
      res.once('close', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        // Only the path, never the query string: a GET may carry variables.
        const path = (req.url ?? '/').split('?')[0];
        logger.info(
          { reqId: id, method: req.method, path, status: res.statusCode, ms: Math.round(ms * 10) / 10 },
          'request',
        );
      });
    }
    const method = req.method ?? 'GET';
    if (corsOrigins.length > 0) res.setHeader('vary', 'origin');
    const cors = corsHeaders(corsOrigins, method, req.headers, 'GET, POST');
    if (cors) for (const [name, value] of Object.entries(cors)) res.setHeader(name, value);
    if (isPreflight(method, req.headers)) {
      res.writeHead(204).end();
      return;
    }

    const path = (req.url ?? '/').split('?')[0];
    if (path === '/liveness') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('Healthy');
      return;
    }
    if (path === '/readiness') {
      const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('timeout'), 1000).unref());
      // A connection known to be down (reconnecting, closed; a cluster master gone) is not-ready at once, without a round trip.
      const down = knownDown(redis);
      const ping = down ? Promise.resolve('down') : pingMasters(redis).catch(() => 'down');
      void Promise.race([ping, timeout]).then((pong) => {
        const ready = pong === 'PONG';
        res
          .writeHead(ready ? 200 : 503, {
            'content-type': 'application/json',
            ...(ready ? {} : { 'retry-after': '1' }),
          })
          .end(
            JSON.stringify({
              status: ready ? 'ready' : 'not-ready',
              appVersion: APP_VERSION,
              checks: { redis: ready ? 'up' : 'down' },
            }),
          );
      });
      return;
    }
    if (path === '/metrics' && publicMetrics) {
      metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
        () => sendError(req, res, 503, 'METRICS_UNAVAILABLE', 'Metrics could not be collected.'),
      );
      return;
    }
    if (path === '/explorer' && (method === 'GET' || method === 'HEAD')) {
      // The explorer page (built by `npm run build`): it reads through /graphql with the user's key.
      const html = readBuiltPage('explorer');
      if (html === undefined)
        sendError(req, res, 404, 'PAGE_NOT_BUILT', 'The explorer page is not built: run `npm run build`.');
      else
        res
          .writeHead(200, { ...PAGE_HEADERS, 'content-length': Buffer.byteLength(html) })
          .end(method === 'HEAD' ? undefined : html);
      return;
    }
    if (method === 'GET' || method === 'HEAD') {
      logScope.run({ reqId: id }, () => void yoga(req, res));
      return;
    }
    readBody(req, maxBodyBytes).then(
      (body) => {
        // @whatwg-node/server builds the fetch Request from `req.body` when a framework has read it.
        if (body.length > 0) (req as IncomingMessage & { body?: Buffer }).body = body;
        logScope.run({ reqId: id }, () => void yoga(req, res));
      },
      (err: unknown) => {
        if (err instanceof BodyTooLarge) {
          sendError(
            req,
            res,
            413,
            'CONTENT_LENGTH_LIMIT_EXCEEDED',
            `The request body is larger than ${maxBodyBytes} bytes.`,
          );
        } else {
          req.destroy();
        }
      },
    );
  };
}

class BodyTooLarge extends Error {}

/** Reads a request body up to `limit` bytes; a declared or actual larger body rejects with BodyTooLarge at once. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}
