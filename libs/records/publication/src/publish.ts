import { UnrecoverableError } from 'bullmq';
import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import { heldByArc, refusalCode, spentTxIds } from '@proofline/chain-domain';
import type {
  BroadcastVerdict,
  ChainPublisher,
  Refusal,
  RefusedVerdict,
  RequestProblemVerdict,
} from '@proofline/chain-domain';
import { recordsKeys } from '@proofline/records-data-access';
import type { RecordStore } from '@proofline/records-data-access';
import type { RedisClient } from '@proofline/shared-redis';
import { PREVIOUS_REJECTED, recordFailure } from './settlement';

/*
 * The batching algorithm of publication: publish one record, follow its chain (its successors
 * accepted meanwhile, parents first, in one submit batch), and fail a rejected record's
 * successors. BullMQ appears only as UnrecoverableError (a permanent outcome); jobs are worker.ts's.
 * At the end, the publication pause a request problem starts and the next transaction verdict ends.
 */

export type PublishOutcome = 'published' | 'already-published' | 'failed-before' | 'unknown';

/**
 * What publication settles besides the record (the funding pool, the confirmation watch list).
 * Both calls MUST be idempotent: a crashed job runs again and calls them again.
 */
export interface PublicationSettlement {
  /** The chain accepted (or already had) `txId`: confirm its funding, watch it for a proof. */
  accepted(txId: string): Promise<void>;
  /**
   * The chain holds `txId` but has not shown it to the network for good yet (a status below
   * SEEN_ON_NETWORK, DOUBLE_SPEND_ATTEMPTED): watch it; its funding stays unsettled (change not
   * spendable, inputs kept) until the confirmation pass sees it SEEN or MINED, or refused for good.
   * Absent (a test double): nothing is settled.
   */
  held?(txId: string): Promise<void>;
  /**
   * The chain refused `txId` for good (`code`: ARC's code or status, or the records reason), or it
   * will never be sent (`neverSent`: its previous record was rejected; `rejected`: the refused
   * transaction its chain waits on). Settle its funding: MUST NOT hand back inputs while any
   * broadcast of the refused transaction may still be mined.
   */
  refused(
    txId: string,
    refusal: {
      readonly code: string;
      readonly detail: string;
      readonly neverSent: boolean;
      readonly rejected?: string;
    },
  ): Promise<void>;
}

/** How many successors one publication follows down a chain before handing the rest on to a new job. */
const FOLLOW_MAX = 1000;
/** Successors published together (one submit batch, parents first) while following a chain. */
const FOLLOW_RUN = 50;

export type PublishDeps = {
  store: RecordStore;
  chain: ChainPublisher;
  clock: Clock;
  logger?: Logger;
  settlement?: PublicationSettlement;
  /** Where a request problem pauses publication (logged once, reported by metrics and readiness). */
  pause?: PublicationPause;
  /**
   * Carries on a chain follow that reached FOLLOW_MAX: a new job for the successors still
   * pending. Without it they waited for the outbox sweeper (5 s), and so did every record accepted
   * after them (their own jobs see an unpublished previous record and leave it to the follow).
   */
  handOff?: (txIds: readonly string[]) => Promise<void>;
  /** FOLLOW_MAX unless a test lowers it. */
  followMax?: number;
  /**
   * Which of these transactions are mined with a stored proof (settled: no longer in flight). The
   * 460 reading asks it about a record's parents; absent, a published parent counts as in flight.
   */
  proven?: (txIds: readonly string[]) => Promise<boolean[]>;
};

/**
 * Publishes one accepted record: loads its raw transaction, submits it (idempotent by txId),
 * marks it published and removes it from the outbox, then follows its chain (below). A successor
 * whose previous record is not published yet answers `'wait-previous'` (nothing done). Transient
 * faults throw (the job is retried with backoff); a permanent rejection is recorded on the record
 * (status reports `failed`) and throws UnrecoverableError.
 *
 * Following the chain: the settle script reports, atomically with the state change, the
 * successors still pending (a successor's own job may have seen this record unpublished and left
 * it waiting). They are published at once, in chain order and submitted together (one `/v1/txs`,
 * parents first, which ARC accepts), then the successors of the last of them, and so on. A
 * follow-up that fails is made due for the outbox sweeper ({@link leaveToSweeper}): this record is
 * published either way.
 */
export async function publishTx(deps: PublishDeps, txId: string): Promise<PublishOutcome | 'wait-previous'> {
  const outcome = await publishOne(deps, txId, false);
  if (typeof outcome === 'string') return outcome;
  let run = outcome.successors;
  const followMax = deps.followMax ?? FOLLOW_MAX;
  for (let followed = 0; run.length > 0 && followed < followMax; followed += run.length) {
    // All read and submitted in this order in one turn: the chain publisher batches them in order.
    // Their partition (one, the chain's) is looked up first, for all of them at once: a lookup
    // each would finish in any order (index buckets on several masters), and a successor sent
    // before its previous record is an orphan to ARC.
    const following = run;
    const results = await deps.store.partitionsOf(following).then(
      () => Promise.allSettled(following.map((successor) => publishOne(deps, successor, true))),
      (err: unknown) => following.map(() => ({ status: 'rejected', reason: err }) as const),
    );
    // Not published by this follow and not settled (a transient fault, a parent ARC does not know
    // yet, a record not read): the sweeper's.
    const unsettled = following.filter((_, i) => {
      const r = results[i];
      if (r?.status === 'rejected') return !(r.reason instanceof UnrecoverableError);
      return r?.value === 'wait-previous' || r?.value === 'unknown';
    });
    if (unsettled.length > 0) await leaveToSweeper(deps, unsettled, results);
    const last = results[results.length - 1];
    run = last?.status === 'fulfilled' && typeof last.value !== 'string' ? last.value.successors : [];
  }
  if (run.length > 0 && deps.handOff) {
    // Best effort: a hand-off that fails leaves them to the sweeper, as before.
    await deps
      .handOff(run)
      .catch((err: unknown) =>
        deps.logger?.warn(
          { txId, err: err instanceof Error ? err.message : String(err) },
          'handing a chain follow on failed; the sweeper picks it up',
        ),
      );
  }
  return 'published';
}

/**
 * Followed successors this follow neither published nor settled: made due for the outbox
 * sweeper now. Their own batch job may have run already and found this record unpublished, and
 * the sweep of what a batch carries is deferred by SWEEP_DEFER_MS, which the producer can write
 * after that job left them to the sweeper: without this they could wait a minute (seen while a
 * slot migrated). Best effort: a failure leaves them to that deferral.
 */
async function leaveToSweeper(
  deps: PublishDeps,
  unsettled: readonly string[],
  results: readonly PromiseSettledResult<unknown>[],
): Promise<void> {
  const reason = results.find((r) => r.status === 'rejected')?.reason;
  deps.logger?.debug(
    { txIds: unsettled, err: reason instanceof Error ? reason.message : String(reason ?? 'not published') },
    'followed successors not published; the outbox sweeper retries them',
  );
  await deps.store
    .deferSweep(unsettled, deps.clock.now())
    .catch((err: unknown) =>
      deps.logger?.warn(
        { txIds: unsettled, err: err instanceof Error ? err.message : String(err) },
        'followed successors not handed to the sweeper; swept after SWEEP_DEFER_MS',
      ),
    );
}

/**
 * {@link publishTx} for one record, without following its chain: `{ successors }` when it
 * published it. `previousSubmitted`: its previous record was submitted just before it in the same
 * batch (a chain follow), so its state is not checked.
 */
async function publishOne(
  deps: PublishDeps,
  txId: string,
  previousSubmitted: boolean,
): Promise<Exclude<PublishOutcome, 'published'> | 'wait-previous' | { successors: string[] }> {
  const info = await deps.store.publication(txId);
  if (!info) return 'unknown';
  if (info.state === 'published') {
    await deps.store.settle(txId, deps.clock.now());
    return 'already-published';
  }
  if (info.state === 'failed') return 'failed-before';
  if (info.prevTxId && !previousSubmitted) {
    const prevState = await deps.store.state(info.prevTxId);
    if (prevState === 'failed') {
      await refuseSuccessors(
        deps,
        txId,
        info.chainId,
        await refusePreviousRejected(deps, txId, info.chainId, info.prevTxId),
      );
      throw new UnrecoverableError(`previous record ${info.prevTxId} was rejected`);
    }
    if (prevState !== 'published') return 'wait-previous';
  }
  const verdict = await deps.chain.submit({
    txId,
    rawTx: info.broadcastTx,
    ...(info.tenant ? { tenant: info.tenant } : {}),
  });
  const first = publicationReading(verdict);
  if (typeof first === 'object' && first.kind === 'request-problem') {
    // The request, not this record: it stays in the outbox, its inputs reserved; retried with back-off.
    await deps.pause?.paused(first);
    throw new RequestProblemError(`publication paused: ${first.detail}`);
  }
  await deps.pause?.resumed();
  const reading = first === 'parent-not-found' ? await parentNotFound(deps, info) : first;
  if (reading === 'wait-previous') return 'wait-previous';
  if (reading === 'published' || reading === 'held') {
    // Funding and the watch list first: a crash before the record is settled re-runs the job,
    // which re-sends the same bytes (the chain answers it knows them) and settles again.
    if (reading === 'published') await deps.settlement?.accepted(txId);
    else await deps.settlement?.held?.(txId);
    const { successors } = await deps.store.settle(
      txId,
      deps.clock.now(),
      undefined,
      Math.min(FOLLOW_RUN, deps.followMax ?? FOLLOW_MAX),
      info.chainId,
    );
    return { successors };
  }
  if (reading === 'retry') {
    // A parent of the transaction has not reached ARC or the chain node yet: retry with backoff.
    const detail = verdict.kind === 'pending' ? verdict.detail : verdict.kind === 'refused' ? verdict.reason : '';
    throw new Error(`chain reports a missing input for ${txId}: ${detail}`);
  }
  const code = refusalCode(reading);
  const failure = recordFailure(reading);
  await deps.settlement?.refused(txId, { code, detail: failure, neverSent: false });
  const { successors } = await deps.store.settle(txId, deps.clock.now(), failure, FOLLOW_RUN, info.chainId);
  deps.logger?.warn(
    { txId, code, verdict: reading.kind, successors: successors.length },
    'record transaction rejected by the chain',
  );
  await refuseSuccessors(deps, txId, info.chainId, successors);
  throw new UnrecoverableError(failure);
}

/**
 * What publication does with a broadcast verdict:
 * - `accepted` (SEEN_ON_NETWORK, MINED) → published.
 * - `pending` SEEN_IN_ORPHAN_MEMPOOL (a parent is missing) → retry the same bytes with backoff.
 * - any other `pending` status (RECEIVED … ACCEPTED_BY_NETWORK when `X-WaitFor` timed out or asked
 *   for less, MINED_IN_STALE_BLOCK) → held: published, not yet seen. ARC holds the transaction but
 *   the network may still refuse it, so its change is not spendable yet; the confirmation pass
 *   polls it at once and like any unproven transaction, and frees its change once it is SEEN or MINED.
 * - `request-problem` (a problem naming no txid of ours: a 400 for the request, a wrong
 *   ARC_CALLBACK_URL) → publication pauses; the record stays pending in the outbox and is retried.
 *   Only an answer that names the transaction refuses it.
 * - `refused` 460 (ARC found no parent; `final: false`) → `parent-not-found`, read by
 *   {@link parentNotFound}: a parent of ours still in flight makes it wait, anything else refuses.
 * - `refused` DOUBLE_SPEND_ATTEMPTED → held: ARC documents it ending MINED or REJECTED, so the
 *   record is published (unconfirmed) and watched; the confirmation pass fails it only on
 *   REJECTED or once a competing transaction is MINED. Its change is not freed meanwhile.
 * - any other `refused` → the record fails with it.
 */
export function publicationReading(
  v: BroadcastVerdict,
): 'published' | 'held' | 'retry' | 'parent-not-found' | RefusedVerdict | RequestProblemVerdict {
  switch (v.kind) {
    case 'accepted':
      return 'published';
    case 'pending':
      return heldByArc(v) ? 'held' : 'retry';
    case 'refused':
      if (v.code === 460 && !v.final) return 'parent-not-found';
      return v.code === 'DOUBLE_SPEND_ATTEMPTED' ? 'held' : v;
    case 'request-problem':
      return v;
  }
}

/**
 * How many times a record answered 460 waits for a parent of ours in flight before the 460 is
 * read as a refusal. Each wait is a job retry with backoff (BullMQ's, then the outbox sweeper's),
 * so this is minutes: far longer than a parent takes to be answered.
 */
export const PARENT_WAITS_MAX = 20;

/**
 * ARC answered 460 (it found no parent of the transaction). Every record transaction is sent in
 * Extended Format, so ARC should not need its parents; an ARC that still looks them up (a raw
 * transaction from before EF, an operator refusing EF's shortcut) answers 460 while a parent is
 * in flight. A parent that is ours and not settled:
 * - the previous record still in the outbox → `wait-previous`: its publication follows the chain
 *   to this record, sent after it;
 * - a record of ours published (ARC answered it, not necessarily SEEN yet) and not proven yet, or
 *   still in the outbox → `retry`: the same bytes again with backoff, after the parent.
 * Up to {@link PARENT_WAITS_MAX} waits per record (counted on the record, logged each time); a
 * parent that is not ours (not a record: a foreign or an unknown output), or settled (failed, or
 * mined with a stored proof), or a record past that bound, keeps the 460 as the record's refusal.
 */
async function parentNotFound(
  deps: PublishDeps,
  info: { readonly txId: string; readonly prevTxId: string | null; readonly rawTx: Uint8Array },
): Promise<'wait-previous' | 'retry' | Refusal> {
  const refusal: Refusal = {
    kind: 'refused',
    txId: info.txId,
    code: 460,
    reason: 'ARC 460: no parent of the transaction found, and none is a record of ours in flight',
    final: true,
    competingTxs: [],
  };
  const parents = new Set(parentTxIds(info.rawTx));
  if (info.prevTxId) parents.add(info.prevTxId);
  const states = await Promise.all([...parents].map(async (p) => [p, await deps.store.state(p)] as const));
  const published = states.filter(([, state]) => state === 'published').map(([p]) => p);
  const proven = new Set((await deps.proven?.(published))?.flatMap((yes, i) => (yes ? [published[i]] : [])));
  const inFlight = states.filter(([p, state]) => state === 'pending' || (state === 'published' && !proven.has(p)));
  if (inFlight.length === 0) return refusal;
  const waits = await deps.store.countParentWait(info.txId);
  if (waits > PARENT_WAITS_MAX) {
    deps.logger?.warn(
      { txId: info.txId, parents: inFlight.map(([p]) => p), waits },
      'ARC 460 for a parent of ours in flight, past the bound of waits: the record fails',
    );
    return { ...refusal, reason: `ARC 460: parents of ours not found by ARC after ${PARENT_WAITS_MAX} waits` };
  }
  deps.logger?.warn(
    { txId: info.txId, parents: inFlight.map(([p, state]) => `${p}:${state}`), waits, max: PARENT_WAITS_MAX },
    'ARC 460 while a parent of ours is in flight: the record is sent again after its parent',
  );
  const prevPending = inFlight.some(([p, state]) => p === info.prevTxId && state === 'pending');
  return prevPending ? 'wait-previous' : 'retry';
}

/** The txIds the bytes spend from; none when they are not a transaction (test doubles' payloads). */
function parentTxIds(tx: Uint8Array): string[] {
  try {
    return spentTxIds(tx);
  } catch {
    return [];
  }
}

/**
 * Fails a record whose previous record was rejected (it spends an output that will never exist);
 * returns up to `maxSuccessors` of its pending successors, to be failed next. `chainId`: its chain.
 */
async function refusePreviousRejected(
  deps: PublishDeps,
  txId: string,
  chainId: string,
  prevTxId: string,
  maxSuccessors = FOLLOW_RUN,
  rejected = prevTxId,
): Promise<string[]> {
  await deps.settlement?.refused(txId, {
    code: 'PREVIOUS_REJECTED',
    detail: `previous record ${prevTxId} was rejected`,
    neverSent: true,
    rejected,
  });
  const { successors } = await deps.store.settle(txId, deps.clock.now(), PREVIOUS_REJECTED, maxSuccessors, chainId);
  return successors;
}

/**
 * A record failed: every successor still pending spends, through the chain, an output that will
 * not exist unless the chain mines the refused transaction after all. They are failed now, in
 * chain order (never sent: their funding goes back to the pool only once the refused transaction
 * can no longer be mined, else they are put back to pending if it is; settlement.ts), instead of each re-checking its previous record once a second until the
 * failure reached it link by link (a long chain took minutes and kept hundreds of jobs cycling).
 * Up to FOLLOW_MAX here; a longer rest is failed by its own jobs as before.
 */
async function refuseSuccessors(
  deps: PublishDeps,
  txId: string,
  chainId: string,
  successors: readonly string[],
): Promise<void> {
  let run = successors;
  let prev = txId;
  for (let failed = 0; run.length > 0 && failed < FOLLOW_MAX; failed += run.length) {
    let next: string[] = [];
    for (const [i, successor] of run.entries()) {
      // The run already lists what follows; only its last record reads the chain further.
      next = await refusePreviousRejected(deps, successor, chainId, prev, i === run.length - 1 ? FOLLOW_RUN : 0, txId);
      prev = successor;
    }
    run = next;
  }
}

/*
 * The publication pause. A problem answer that names no transaction of ours (ARC's 400 for a bad `X-CallbackUrl`, an
 * unknown `X-WaitFor`, an unparsable body) is about the request, the same for every record: the
 * deployment's configuration or the chain service is wrong, not the record. Publication pauses:
 * the record stays in the outbox with its inputs reserved, its job is retried with back-off
 * (then the outbox sweeper re-enqueues it), and the pause is shared through Redis so that every
 * process reports it (the worker's metric, the API's readiness) and it is logged once.
 */

/** What a pause records: when it began and the problem that began it. */
export interface PauseState {
  readonly since: string;
  readonly httpStatus: number;
  readonly detail: string;
}

/**
 * How long a pause is reported without a new problem answer. Every problem answer renews it and
 * the next answer that is not a request problem ends it, so this only bounds a stale report left
 * by a process that stopped while paused.
 */
export const PAUSE_TTL_MS = 5 * 60_000;

/** A transient fault of one publication: the chain refused the request, not the transaction. */
export class RequestProblemError extends Error {
  override readonly name = 'RequestProblemError';
}

export interface PublicationPause {
  /** The chain answered a request problem: pause (logged once per pause across processes). */
  paused(v: RequestProblemVerdict): Promise<void>;
  /** The chain answered about a transaction: end the pause if this process saw one. */
  resumed(): Promise<void>;
}

/** The pause on Redis (`records:publication-paused`). */
export function publicationPause(o: {
  redis: RedisClient;
  prefix: string;
  clock: Clock;
  logger?: Logger;
}): PublicationPause {
  const key = recordsKeys(o.prefix).publicationPaused;
  // Only a process that saw a pause ends one: the common path (no pause) costs no round trip.
  let seen = false;
  return {
    async paused(v) {
      seen = true;
      const state: PauseState = { since: o.clock.now().toISOString(), httpStatus: v.httpStatus, detail: v.detail };
      const first = await o.redis.set(key, JSON.stringify(state), 'PX', PAUSE_TTL_MS, 'NX');
      if (first === 'OK') {
        o.logger?.warn(
          { httpStatus: v.httpStatus, detail: v.detail },
          'publication paused: the chain service refused the request itself (check ARC_URL, ARC_CALLBACK_URL, ARC_WAIT_FOR); records stay in the outbox and are retried',
        );
      } else {
        await o.redis.pexpire(key, PAUSE_TTL_MS);
      }
    },
    async resumed() {
      if (!seen) return;
      seen = false;
      if ((await o.redis.del(key)) === 1) o.logger?.warn({}, 'publication resumed: the chain service answers again');
    },
  };
}

/** The current pause, or null when publication runs (readiness, metrics). */
export async function readPublicationPause(redis: RedisClient, prefix: string): Promise<PauseState | null> {
  const raw = await redis.get(recordsKeys(prefix).publicationPaused);
  if (!raw) return null;
  try {
    return JSON.parse(raw) as PauseState;
  } catch {
    return null;
  }
}
