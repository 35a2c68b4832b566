import { createHash, timingSafeEqual } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type { RedisClient } from '@proofline/shared-redis';
import { z } from 'zod';
import { isArcStatus, isHashHex, verdictOfStatus } from '@proofline/chain-domain';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { RedisCallTimeoutError } from '@proofline/shared-redis';
import { publishBlockEvent } from './arc-blocks';
import { proveMined } from './bump';
import type { MinedClaim, ProofDeps, ProveReport } from './bump';

/*
 * ARC's status callbacks (`X-CallbackUrl` / `X-CallbackToken`), end to end in one module. In the
 * request: authentication (the Bearer token, constant time), parsing (single or batched bodies)
 * and queueing (a BullMQ job on QUEUES.arcCallbacks): the answer is 200 once the job is stored,
 * never before. In a worker: proving (MINED items through the same verify-against-headers-then-
 * store path as polling), then the tip and block events of the blocks proven. A callback is only a
 * hint: polling stays the ground truth, so a lost or refused callback only delays a proof. The
 * HTTP route is a thin adapter.
 */

const hashHex = z
  .string()
  .transform((s) => s.toLowerCase())
  .refine(isHashHex, 'must be 64 hex characters');
const callbackItem = z.object({
  timestamp: z.string().nullish(),
  txid: hashHex,
  txStatus: z.string().min(1),
  extraInfo: z.string().nullish(),
  competingTxs: z.array(z.string()).nullish(),
  merklePath: z.string().nullish(),
  blockHash: z.string().nullish(),
  blockHeight: z.number().int().nonnegative().nullish(),
});
const callbackBody = z.union([
  z.object({ count: z.number().int().nonnegative(), callbacks: z.array(callbackItem).max(1000) }),
  callbackItem,
]);
export type ArcCallback = z.infer<typeof callbackItem>;

/** A callback refused before any work: a wrong token (401) or a body that is not a callback (400). */
export type CallbackRefusal =
  | { readonly httpStatus: 401; readonly errorCode: 'ARC_CALLBACK_UNAUTHORIZED'; readonly detail: string }
  | { readonly httpStatus: 400; readonly errorCode: 'ARC_CALLBACK_INVALID'; readonly detail: string };

/** What the callback route answers; a wrong token or a bad body is data, not a throw. */
export type CallbackOutcome =
  CallbackRefusal | { readonly httpStatus: 200; readonly callbacks: readonly ArcCallback[] };

/**
 * Checks `Authorization: Bearer <ARC_CALLBACK_TOKEN>` in constant time; null when it matches.
 * An empty configured token matches nothing.
 */
export function authorizeArcCallback(authorization: string | undefined, token: string): CallbackRefusal | null {
  const given = /^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '';
  if (token && constantTimeEqual(given, token)) return null;
  return { httpStatus: 401, errorCode: 'ARC_CALLBACK_UNAUTHORIZED', detail: 'missing or wrong callback token' };
}

/**
 * Authenticates ({@link authorizeArcCallback}) and parses a single or batch (`{count, callbacks[]}`)
 * ARC callback. Fast and I/O free.
 */
export function parseArcCallback(body: unknown, authorization: string | undefined, token: string): CallbackOutcome {
  const refused = authorizeArcCallback(authorization, token);
  if (refused) return refused;
  const parsed = callbackBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      httpStatus: 400,
      errorCode: 'ARC_CALLBACK_INVALID',
      detail: `not an ARC callback: ${issue ? `${issue.path.join('.')} ${issue.message}` : 'invalid'}`,
    };
  }
  const callbacks = 'callbacks' in parsed.data ? parsed.data.callbacks : [parsed.data];
  return { httpStatus: 200, callbacks };
}

export type HandledCallback =
  CallbackRefusal | ({ readonly httpStatus: 200; readonly hints: readonly ArcCallback[] } & ProveReport);

/** Where proven blocks are announced: the tip moves up and a block event is published. */
export interface CallbackEvents {
  /** Command connection and prefix of block events. */
  readonly redis: RedisClient;
  readonly prefix: string;
}

/**
 * Verifies and stores parsed callbacks: every MINED item with block data (its verdict carries the
 * block) goes through the same verify-and-store path as polling ({@link proveMined}); with
 * `events`, each block proven moves the stored tip up when above it and is announced as a block
 * event (confirmation subscriptions wake now, not at the next poll). Idempotent (storing a proof
 * again changes nothing). The other statuses are returned as `hints`: polling stays the ground
 * truth.
 */
export async function proveArcCallbacks(
  deps: ProofDeps & { readonly events?: CallbackEvents },
  callbacks: readonly ArcCallback[],
): Promise<{ readonly hints: readonly ArcCallback[] } & ProveReport> {
  const claims: MinedClaim[] = [];
  const hints: ArcCallback[] = [];
  for (const c of callbacks) {
    const verdict = isArcStatus(c.txStatus) ? verdictOfStatus(c.txid, { ...c, txStatus: c.txStatus }) : null;
    if (verdict?.kind === 'accepted' && verdict.mined) claims.push({ txId: c.txid, ...verdict.mined });
    else hints.push(c);
  }
  const report = await proveMined(deps, claims);
  if (deps.events) {
    for (const { hash, height } of report.blocks) {
      // A verified block above the stored tip moves the tip up, atomically (never down).
      await deps.store.raiseTip({ hash, height });
      await publishBlockEvent(deps.events.redis, deps.events.prefix, deps.store, hash).catch(() => null);
    }
  }
  return { hints, ...report };
}

/**
 * Handles an ARC callback end to end in one call: {@link parseArcCallback}, then
 * {@link proveArcCallbacks}. The route does not use it (it queues, see {@link arcCallbackReceiver});
 * the CLI and the specs do.
 */
export async function handleArcCallback(
  deps: ProofDeps & { readonly token: string; readonly events?: CallbackEvents },
  body: unknown,
  authorization: string | undefined,
): Promise<HandledCallback> {
  const outcome = parseArcCallback(body, authorization, deps.token);
  if (outcome.httpStatus !== 200) return outcome;
  return { httpStatus: 200, ...(await proveArcCallbacks(deps, outcome.callbacks)) };
}

// ---- The queue between the route and the worker ------------------------------------------------

/**
 * The largest callback body the route reads (bytes). ARC's callbacker sends up to 500 callbacks
 * per batch (`batchSizeDefault`, internal/callbacker/processor.go); a MINED callback with the BUMP
 * of a transaction in a block of about a million transactions is about 1.7 KB of JSON, so a full
 * batch is about 0.9 MB (measured by arc-callback.spec). 2 MiB holds it with room for larger
 * blocks; a body above it is answered 413 and never read.
 */
export const ARC_CALLBACK_BODY_LIMIT = 2 * 1024 * 1024;

/** Job name on {@link QUEUES.arcCallbacks}. */
export const ARC_CALLBACK_JOB = 'prove';

/**
 * Options of every callback job. A job whose headers source did not answer is retried with
 * exponential back-off (1 s, 2 s, … about 8.5 min in all); past that the polling (after
 * ARC_CALLBACK_GRACE_MS) proves the same transactions. Completed jobs are removed at once (a
 * batch can be a megabyte; storing a proof again is harmless, so a re-delivered batch needs no
 * record of the first one); a few failed ones are kept for inspection.
 */
export const ARC_CALLBACK_JOB_OPTIONS = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true,
  removeOnFail: { age: 86_400, count: 20 },
} as const;

/** The data of a callback job: the parsed callbacks still to prove. */
export interface ArcCallbackJob {
  readonly callbacks: readonly ArcCallback[];
}

/**
 * The job id of a parsed batch: the SHA-256 of its canonical JSON (hex, so no ':'). The same
 * batch delivered twice while its job waits is one job; after it completed, a second job stores
 * nothing new.
 */
export function arcCallbackJobId(callbacks: readonly ArcCallback[]): string {
  return createHash('sha256').update(JSON.stringify(callbacks)).digest('hex');
}

/** Where the route puts parsed callbacks (a BullMQ queue on QUEUES.arcCallbacks). */
export interface ArcCallbackQueue {
  /** Resolves once the job is stored in Redis; rejects (a Redis failure) when it is not. */
  enqueue(callbacks: readonly ArcCallback[]): Promise<{ readonly jobId: string }>;
  close(): Promise<void>;
}

/**
 * The producer side, on the app's request-path BullMQ connection. An add that has not resolved
 * within `timeoutMs` rejects with a Redis failure (the route answers 503): a queue waits for its
 * connection to be ready without a deadline of its own. A BullMQ queue whose first use met Redis
 * down keeps failing (its connection's initialisation is a promise it never retries), so a failed
 * add drops the queue and the next add opens a new one. An add that timed out may still land
 * later: ARC sends the batch again, and the same job id or the idempotent store absorbs it.
 */
export function arcCallbackQueue(connection: RedisClient, redisPrefix: string, timeoutMs = 2000): ArcCallbackQueue {
  let queue: Queue<ArcCallbackJob> | null = null;
  const open = () => {
    const q = new Queue<ArcCallbackJob>(QUEUES.arcCallbacks, {
      connection,
      prefix: bullPrefix(redisPrefix, QUEUES.arcCallbacks),
    });
    q.on('error', () => undefined); // a failed add rejects its caller, which answers 503
    return q;
  };
  return {
    async enqueue(callbacks) {
      const jobId = arcCallbackJobId(callbacks);
      const q = (queue ??= open());
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          q.add(ARC_CALLBACK_JOB, { callbacks }, { ...ARC_CALLBACK_JOB_OPTIONS, jobId }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new RedisCallTimeoutError('queue.add', timeoutMs)), timeoutMs);
          }),
        ]);
      } catch (err) {
        if (queue === q) queue = null;
        void q.close().catch(() => undefined);
        throw err;
      } finally {
        clearTimeout(timer);
      }
      return { jobId };
    },
    close: async () => {
      await queue?.close();
      queue = null;
    },
  };
}

/** The body the route answers once the batch is queued. */
export interface CallbackAnswer {
  readonly received: true;
  /** Callbacks in the batch, all queued for verification. */
  readonly queued: number;
}

export interface ArcCallbackReceiver {
  /** The token check alone, before the body is read: null when it passes. */
  authorize(authorization: string | undefined): CallbackRefusal | null;
  /**
   * Authenticates and parses ({@link parseArcCallback}), then queues the batch: the answer is
   * 200 only once the job is stored; a Redis failure rejects (the route answers 503, ARC retries).
   */
  receive(
    body: unknown,
    authorization: string | undefined,
  ): Promise<CallbackRefusal | { readonly httpStatus: 200; readonly answer: CallbackAnswer }>;
}

/**
 * The receiver a callback route adapts: the token (ARC_CALLBACK_TOKEN) and the queue. Nothing is
 * verified in the request: ARC waits 5 s for an answer (internal/callbacker/sender.go) while a
 * header fetch may take ARC_TIMEOUT_MS, so verification runs in {@link startArcCallbackWorker}.
 */
export function arcCallbackReceiver(deps: {
  readonly token: string;
  readonly queue: ArcCallbackQueue;
}): ArcCallbackReceiver {
  return {
    authorize: (authorization) => authorizeArcCallback(authorization, deps.token),
    async receive(body, authorization) {
      const outcome = parseArcCallback(body, authorization, deps.token);
      if (outcome.httpStatus !== 200) return outcome;
      if (outcome.callbacks.length > 0) await deps.queue.enqueue(outcome.callbacks);
      return { httpStatus: 200, answer: { received: true, queued: outcome.callbacks.length } };
    },
  };
}

// ---- The worker --------------------------------------------------------------------------------

export interface ArcCallbackWorkerOptions {
  /** The app's BullMQ connection (`maxRetriesPerRequest: null`; shared, not owned). */
  readonly connection: RedisClient;
  readonly redisPrefix: string;
  /** Headers source, proof store, logger; `events` announces the blocks proven. */
  readonly deps: ProofDeps & { readonly events?: CallbackEvents };
  /**
   * The transactions whose proof a job stored (or found stored again): their funding is settled
   * now (records-publication's `Publication.seen` fits: change freed, a failed record revived), not
   * at a later confirmation pass, which polls none of them (a stored proof unwatches a transaction)
   * and checks only the pool's oldest unsettled transactions for a proof. MUST be idempotent: a
   * failure fails the job, which BullMQ retries whole.
   */
  readonly onProven?: (txIds: readonly string[]) => Promise<void>;
  /** Jobs run at once (WORKER_CONCURRENCY). */
  readonly concurrency?: number;
  /** BullMQ lock settings (tests shorten them to recover a dead worker's job quickly). */
  readonly lockDuration?: number;
  readonly stalledInterval?: number;
  readonly logger?: { debug(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface RunningArcCallbackWorker {
  close(): Promise<void>;
}

/**
 * Proves queued callbacks ({@link proveArcCallbacks}). The proofs that verified are stored at
 * once; when the headers source did not answer for some (HEADER_UNAVAILABLE), the job keeps only
 * those callbacks and fails, so BullMQ retries them after its back-off. Any other refusal (a BUMP
 * that does not match its header) is final for the callback: polling decides. A worker that dies
 * with a job in hand leaves it to another once its lock expires (BullMQ's stalled-job check).
 */
export async function startArcCallbackWorker(o: ArcCallbackWorkerOptions): Promise<RunningArcCallbackWorker> {
  const worker = new Worker<ArcCallbackJob>(
    QUEUES.arcCallbacks,
    async (job) => {
      const report = await proveArcCallbacks(o.deps, job.data.callbacks);
      const unavailable = new Set(report.failed.filter((f) => f.reason === 'HEADER_UNAVAILABLE').map((f) => f.txId));
      if (report.proven.length > 0) {
        o.logger?.debug({ proven: report.proven.length, jobId: job.id }, 'callbacks proven');
        await o.onProven?.(report.proven);
      }
      if (unavailable.size === 0) return { proven: report.proven.length, refused: report.failed.length };
      await job.updateData({ callbacks: job.data.callbacks.filter((c) => unavailable.has(c.txid)) });
      throw new Error(`headers source unavailable for ${unavailable.size} callback(s); retried`);
    },
    {
      connection: o.connection,
      prefix: bullPrefix(o.redisPrefix, QUEUES.arcCallbacks),
      concurrency: o.concurrency ?? 4,
      ...(o.lockDuration ? { lockDuration: o.lockDuration } : {}),
      ...(o.stalledInterval ? { stalledInterval: o.stalledInterval } : {}),
    },
  );
  worker.on('failed', (job, err) =>
    o.logger?.warn({ err: err.message, jobId: job?.id, attempt: job?.attemptsMade }, 'callback job failed'),
  );
  worker.on('error', (err) => o.logger?.warn({ err: err.message }, 'callback worker error'));
  await worker.waitUntilReady();
  return { close: () => worker.close() };
}

function constantTimeEqual(a: string, b: string): boolean {
  // Hash first so the comparison takes the same time whatever the lengths.
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
