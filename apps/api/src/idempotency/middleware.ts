import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '@proofline/shared-errors';
import type { IdempotencyStore, RecordedAnswer } from './idempotency-store';

/** 1–255 visible ASCII characters (RFC 9110 VCHAR, no spaces). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Response headers a replay repeats (besides the status and body). */
const REPLAYED_HEADERS = ['content-type', 'retry-after', 'etag', 'location'] as const;

/**
 * Hash of what makes two requests "the same": method, path (with its txId), query (parameters
 * sorted) and body bytes.
 */
export function requestFingerprint(req: Request): string {
  const [pathPart = '', query = ''] = req.originalUrl.split('?', 2);
  const params = new URLSearchParams(query);
  params.sort();
  const hash = createHash('sha256').update(`${req.method}\n${pathPart}\n${params.toString()}\n`);
  if (Buffer.isBuffer(req.body)) hash.update(req.body);
  return hash.digest('hex');
}

/**
 * Express middleware for record writes (after authentication and the body parser): with an
 * `Idempotency-Key` header, the first request of a key does the work and its answer is recorded;
 * the same key with the same request replays that answer (same status and body, header
 * `Idempotent-Replayed: true`) for `ttlMs`; with another request it is 422
 * IDEMPOTENCY_KEY_REUSED; while the first is still running, others wait up to `waitMs` for its
 * answer, then 409 IDEMPOTENCY_KEY_IN_PROGRESS with Retry-After. A malformed key is 400
 * IDEMPOTENCY_KEY_INVALID. Without the header it costs nothing.
 *
 * Answers below 500 are recorded and replayed (a 4xx such as 409 NOT_LINKED_RECORDS_END is the
 * request's answer, as Stripe does); a 5xx releases the claim so a retry may do the work.
 */
export function idempotent(store: IdempotencyStore, tenantOf: (req: Request) => string): RequestHandler {
  return (req, res, next) => {
    const key = req.header('idempotency-key');
    if (key === undefined) {
      next();
      return;
    }
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      next(
        new AppError({
          errorCode: 'IDEMPOTENCY_KEY_INVALID',
          httpStatus: 400,
          detail: 'Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces), sent once.',
        }),
      );
      return;
    }
    const tenant = tenantOf(req);
    const fingerprint = requestFingerprint(req);
    claimOrWait(store, tenant, key, fingerprint).then((outcome) => {
      if (outcome.kind === 'answer') {
        replay(res, outcome.answer);
        return;
      }
      recordOnEnd(res, store, tenant, key, fingerprint, outcome.owner);
      next();
    }, next);
  };
}

type Decision =
  { readonly kind: 'work'; readonly owner: string } | { readonly kind: 'answer'; readonly answer: RecordedAnswer };

async function claimOrWait(
  store: IdempotencyStore,
  tenant: string,
  key: string,
  fingerprint: string,
): Promise<Decision> {
  const deadline = Date.now() + store.waitMs;
  for (let pause = 10; ; pause = Math.min(pause * 2, 100)) {
    const outcome = await store.claim(tenant, key, fingerprint);
    if (outcome.kind === 'claimed') return { kind: 'work', owner: outcome.owner };
    if (outcome.fingerprint !== fingerprint) {
      throw new AppError({
        errorCode: 'IDEMPOTENCY_KEY_REUSED',
        httpStatus: 422,
        detail:
          'This Idempotency-Key was already used with another request (method, path, query or body differ). Use a new key for a new request.',
      });
    }
    if (outcome.kind === 'done') return { kind: 'answer', answer: outcome.answer };
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new AppError({
        errorCode: 'IDEMPOTENCY_KEY_IN_PROGRESS',
        httpStatus: 409,
        detail:
          'A request with this Idempotency-Key is still being processed. Retry after Retry-After seconds to get its answer.',
        headers: { 'Retry-After': '1' },
      });
    }
    await new Promise((r) => setTimeout(r, Math.min(pause, left)));
  }
}

function replay(res: Response, answer: RecordedAnswer): void {
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.setHeader('Idempotent-Replayed', 'true');
  res.setHeader('Content-Length', String(answer.body.length));
  res.end(answer.body);
}

/**
 * Hooks `res.end` so the answer is recorded (or, for a 5xx, the claim released) as it is sent.
 * The Redis command is issued before the bytes go out, not awaited: the write path pays the claim
 * only, and a process that dies after answering has already handed the record to Redis.
 */
function recordOnEnd(
  res: Response,
  store: IdempotencyStore,
  tenant: string,
  key: string,
  fingerprint: string,
  owner: string,
): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    const [chunk, encoding] = args;
    const body = Buffer.isBuffer(chunk)
      ? chunk
      : typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.alloc(0);
    const log = (err: unknown) =>
      res.req.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'idempotency record failed');
    if (res.statusCode < 500) {
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) {
        const value = res.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      store.complete(tenant, key, fingerprint, { status: res.statusCode, headers, body }).catch(log);
    } else {
      store.release(tenant, key, owner).catch(log);
    }
    return end(...args);
  }) as Response['end'];
}
