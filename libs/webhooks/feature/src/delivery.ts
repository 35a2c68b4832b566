import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { UnrecoverableError, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import type { Clock } from '@proofline/shared-config';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import type { WebhookStore } from '@proofline/webhooks-data-access';
import { WebhookDeliveryJob, isForbiddenAddress, signWebhook } from '@proofline/webhooks-domain';
import type { DeliveryAttempt, StoredWebhook } from '@proofline/webhooks-domain';
import type { SecretBox } from './secret-box';
import { ForbiddenAddressError, guardedLookup } from './url-guard';

/** Deadline of one delivery attempt (connect, send, answer). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** A claim outlives its attempt's deadline by this much (a crashed attempt frees it by itself). */
const CLAIM_MARGIN_MS = 5000;

export interface SendResult {
  readonly statusCode: number | null;
  readonly error: string | null;
  /** The address was refused (DNS rebinding or a literal private IP): retrying cannot help. */
  readonly forbidden: boolean;
}

/**
 * POSTs `body` to `url` once: no redirect is followed (a 3xx is a failed attempt), the connection
 * goes only to an allowed address (checked on the resolved address itself), and everything must
 * finish within `timeoutMs`. Never throws: the outcome is data.
 */
export function postOnce(
  url: URL,
  headers: Record<string, string>,
  body: string,
  o: { allowPrivate: boolean; timeoutMs: number },
): Promise<SendResult> {
  return new Promise((resolve) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!o.allowPrivate && isIP(host) !== 0 && isForbiddenAddress(host)) {
      resolve({ statusCode: null, error: 'the URL names a forbidden address', forbidden: true });
      return;
    }
    let done = false;
    const finish = (r: SendResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(r);
    };
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'Proofline-Webhooks/1',
      },
      lookup: guardedLookup(o.allowPrivate),
      agent: false,
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish({ statusCode: null, error: `no answer within ${o.timeoutMs} ms`, forbidden: false });
    }, o.timeoutMs);
    request.on('response', (res) => {
      const statusCode = res.statusCode ?? 0;
      res.resume(); // the answer's body is not read
      res.on('end', () => undefined);
      const ok = statusCode >= 200 && statusCode < 300;
      const error = ok
        ? null
        : statusCode >= 300 && statusCode < 400
          ? `redirect ${statusCode} not followed`
          : `receiver answered ${statusCode}`;
      request.destroy();
      finish({ statusCode, error, forbidden: false });
    });
    request.on('error', (err) => {
      const forbidden = err instanceof ForbiddenAddressError || err.name === 'ForbiddenAddressError';
      finish({
        statusCode: null,
        error: forbidden
          ? 'the host resolves to a forbidden address'
          : `connection failed: ${(err as NodeJS.ErrnoException).code ?? err.message}`,
        forbidden,
      });
    });
    request.end(body);
  });
}

export interface DeliveryDeps {
  readonly store: WebhookStore;
  readonly box: () => Promise<SecretBox>;
  readonly clock: Clock;
  readonly allowPrivate: boolean;
  readonly timeoutMs?: number;
  readonly logger?: Logger;
}

export type DeliveryOutcome = 'delivered' | 'already-delivered' | 'webhook-deleted';

/** Thrown when another attempt of the same message holds its claim: BullMQ retries it later (and then finds it delivered). */
export class DeliveryBusyError extends Error {
  override readonly name = 'DeliveryBusyError';
}

/**
 * One delivery attempt of a `webhooks-deliver` job (Standard Webhooks): `webhook-id` is the
 * message id (the same on every retry), `webhook-timestamp` the attempt's Unix seconds,
 * `webhook-signature` `v1,` + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" with the secret's
 * decoded bytes. Every attempt is recorded for the deliveries endpoint. A non-2xx answer, a
 * timeout or a connection error throws (BullMQ retries with exponential backoff); a forbidden
 * address or a bad payload is unrecoverable. The secret never reaches a log line.
 *
 * A message that got a 2xx is never sent again: the webhook's ledger (`claimDelivery`) is checked
 * before each attempt and written before the job completes, so a job BullMQ runs again (stalled,
 * or its completion lost) finds it delivered; and one attempt of a message sends at a time (a
 * second one throws {@link DeliveryBusyError}: retried later, it finds the first one's outcome).
 */
export async function deliverWebhook(
  deps: DeliveryDeps,
  job: Pick<Job, 'data' | 'attemptsMade'>,
): Promise<DeliveryOutcome> {
  const parsed = WebhookDeliveryJob.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError('invalid webhooks-deliver payload');
  const d = parsed.data;
  const hook = await deps.store.get(d.webhookId);
  if (!hook) return 'webhook-deleted';
  // Exactly once on the success path: BullMQ runs a job at least once (a stalled job is run again,
  // a job whose completion was lost is run again), so the ledger, not the job, says whether this
  // message was delivered; and only one attempt of a message sends at a time.
  const timeoutMs = deps.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const token = randomUUID();
  const claim = await deps.store.claimDelivery(hook.id, d.messageId, token, timeoutMs + CLAIM_MARGIN_MS);
  if (claim === 'delivered') return 'already-delivered';
  if (claim === 'busy') throw new DeliveryBusyError('another attempt of this message is running');
  try {
    return await attempt(deps, hook, d, job.attemptsMade + 1, timeoutMs);
  } catch (err) {
    await deps.store.releaseDelivery(hook.id, d.messageId, token);
    throw err;
  }
}

/** One claimed attempt: sign, POST, mark delivered on a 2xx (before logging it), log the attempt. */
async function attempt(
  deps: DeliveryDeps,
  hook: StoredWebhook,
  d: WebhookDeliveryJob,
  attemptNo: number,
  timeoutMs: number,
): Promise<DeliveryOutcome> {
  const secret = (await deps.box()).open(hook.secretSealed, hook.id);
  const started = deps.clock.now();
  const timestamp = Math.floor(started.getTime() / 1000);
  const headers = {
    'webhook-id': d.messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, d.messageId, timestamp, d.body),
  };
  const t0 = performance.now();
  const result = await postOnce(new URL(hook.url), headers, d.body, { allowPrivate: deps.allowPrivate, timeoutMs });
  if (result.error === null) await deps.store.markDelivered(hook.id, d.messageId);
  const record: DeliveryAttempt = {
    messageId: d.messageId,
    event: d.event,
    txId: d.txId,
    attempt: attemptNo,
    at: started.toISOString(),
    statusCode: result.statusCode,
    durationMs: Math.round(performance.now() - t0),
    error: result.error,
    delivered: result.error === null,
  };
  await deps.store.recordAttempt(hook.id, record);
  if (result.error === null) return 'delivered';
  deps.logger?.warn(
    {
      webhookId: hook.id,
      messageId: d.messageId,
      statusCode: result.statusCode,
      err: result.error,
      attempt: record.attempt,
    },
    'webhook delivery attempt failed',
  );
  if (result.forbidden) throw new UnrecoverableError(result.error);
  throw new Error(result.error);
}

export interface WebhookDeliveryOptions extends DeliveryDeps {
  /** The app's BullMQ connection (shared, not closed). */
  readonly connection: RedisClient;
  readonly prefix: string;
  readonly concurrency: number;
}

export interface RunningWebhookDelivery {
  readonly worker: Worker;
  close(): Promise<void>;
}

/** Starts the delivery worker on QUEUES.webhooksDeliver. */
export function startWebhookDelivery(o: WebhookDeliveryOptions): RunningWebhookDelivery {
  const worker = new Worker(QUEUES.webhooksDeliver, (job) => deliverWebhook(o, job), {
    connection: o.connection,
    prefix: bullPrefix(o.prefix, QUEUES.webhooksDeliver),
    concurrency: o.concurrency,
  });
  worker.on('error', (err) => o.logger?.warn({ err: err.message }, 'webhook delivery worker error'));
  return { worker, close: () => worker.close() };
}
