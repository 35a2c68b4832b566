import type { RedisClient } from '@proofline/shared-redis';
import { heldByArc, parseHeader, provesNeverMinable, refusalCode, spentTxIds } from '@proofline/chain-domain';
import type { HeadersSource, Refusal } from '@proofline/chain-domain';
import type { Config } from '@proofline/shared-config';
import type { ArcStatusResult } from './arc-client';
import { publishBlockEvent } from './arc-blocks';
import type { BatchSubmitOutcome } from './arc-publisher';
import { proveMined } from './bump';
import type { MinedClaim, ProofDeps, ProveReport, TrackerLogger } from './bump';
import type { ArcProofStore } from './proof-store';
import {
  ORPHAN_MAX_BLOCKS,
  StuckOrphans,
  TRANSIENT_RESEND_MS,
  TransientRejects,
  rejectedTransiently,
} from './transient-reject';

export interface ConfirmationPassDeps {
  readonly client: StatusSource;
  /** Re-broadcasts the same bytes (ArcChainPublisher.submitMany fits). */
  readonly rebroadcast: (
    txs: readonly { readonly txId: string; readonly rawTx: Uint8Array }[],
  ) => Promise<BatchSubmitOutcome[]>;
  readonly headers: HeadersSource;
  readonly store: ArcProofStore;
  /** Command connection and prefix for block events. */
  readonly redis: RedisClient;
  readonly prefix: string;
  /** The raw transactions (the bytes accepted at write time) of txIds, null where unknown. */
  readonly rawTxOf: (txIds: readonly string[]) => Promise<(Uint8Array | null)[]>;
  /**
   * A watched transaction was refused: mark its record failed; `final` (the default): settle its
   * funding for good, else leave it committed (the transaction stays watched: a broadcast of it
   * may still be mined). Returns false when the record's state did not change (not counted again).
   */
  readonly onRefused: (refusal: Refusal, how?: { readonly final: boolean }) => Promise<boolean | void>;
  /**
   * Watched transactions ARC reported SEEN_ON_NETWORK or MINED (a poll or a re-broadcast): confirm
   * their funding (change spendable). MUST be idempotent: a transaction is reported every pass
   * until its proof is stored.
   */
  readonly onSeen?: (txIds: readonly string[]) => Promise<void>;
  /**
   * Watched transactions ARC holds below SEEN_ON_NETWORK with nothing in their way (a poll or a
   * re-broadcast answered RECEIVED … ACCEPTED_BY_NETWORK or MINED_IN_STALE_BLOCK: `heldByArc`),
   * as a first broadcast answered so publishes a record: a record failed for a refusal ARC did not
   * keep is published again. Nothing is freed (its change waits for SEEN_ON_NETWORK or MINED).
   * MUST be idempotent: a transaction is reported every pass while ARC holds it so.
   */
  readonly onHeld?: (txIds: readonly string[]) => Promise<void>;
  /**
   * Transactions whose funding still waits for the chain (the pool's oldest unsettled ones). Any of
   * them with a stored proof was mined, its proof perhaps stored by a callback (which unwatches it
   * before a poll saw it): it is reported to `onSeen` too.
   */
  readonly unsettled?: () => Promise<readonly string[]>;
  readonly logger?: TrackerLogger & { info?(obj: object, msg: string): void };
}

export interface ConfirmationPassOptions {
  /** Watched txIds polled per pass, longest waiting first (default 500). */
  readonly batch?: number;
  /** Stored blocks re-checked against the headers source per pass (default 6). */
  readonly reorgDepth?: number;
  /** Status queries in flight at once (default 8). */
  readonly concurrency?: number;
  /**
   * How long a transaction refused in a way that does not prove it can never be mined (460, 465,
   * 462, 466, … answered to a submission or a re-broadcast) stays watched after it was first
   * watched, polled and re-broadcast like any unproven transaction (default 10 min). Seen or mined
   * within it, its record is published again; past it, its funding is dropped (never released).
   */
  readonly refusedWatchMs?: number;
  /**
   * Poll a watched transaction only once it has waited this long since publication (default 0).
   * With ARC callbacks configured this is ARC_CALLBACK_GRACE_MS: a callback proves a transaction
   * without a poll, and polling catches the ones whose callback was lost. See {@link confirmationOptions}.
   */
  readonly pollAfterMs?: number;
  /**
   * A REJECTED for a transient reason (`too-long-mempool-chain`, a full mempool, …) is re-sent once,
   * the same bytes, after the next block or, without one, after this delay (default 10 min).
   */
  readonly transientResendMs?: number;
  /**
   * Blocks a transaction may stay SEEN_IN_ORPHAN_MEMPOOL (ARC_ORPHAN_MAX_BLOCKS, default 6): past
   * them it is escalated (logged with its missing parents, counted, re-sent once after its parents
   * of ours); past as many again it is read as refused (460, not final: the bound applies).
   */
  readonly orphanMaxBlocks?: number;
  readonly now?: Date;
}

/** The pass options a chain configuration implies: the callback grace applies only when callbacks are configured; ARC_ORPHAN_MAX_BLOCKS. */
export function confirmationOptions(
  chain: Pick<Config['chain'], 'arcCallbackUrl' | 'arcCallbackToken' | 'callbackGraceMs'> & {
    readonly orphanMaxBlocks?: number | undefined;
  },
): Pick<ConfirmationPassOptions, 'pollAfterMs' | 'orphanMaxBlocks'> {
  return {
    pollAfterMs: chain.arcCallbackUrl && chain.arcCallbackToken ? chain.callbackGraceMs : 0,
    ...(chain.orphanMaxBlocks ? { orphanMaxBlocks: chain.orphanMaxBlocks } : {}),
  };
}

export interface ConfirmationPassReport {
  readonly polled: number;
  readonly proven: number;
  readonly refusedProofs: number;
  readonly waiting: number;
  readonly rebroadcast: number;
  readonly refused: number;
  /** DOUBLE_SPEND_ATTEMPTED answers still watched: no competing transaction is MINED yet. */
  readonly doubleSpends: number;
  /** Refusals that do not prove the transaction never minable: its record failed, still watched. */
  readonly undecided: number;
  /** REJECTED for a transient reason, not re-sent yet: the record is left as it is, still watched. */
  readonly transientRejects: number;
  /** Transiently REJECTED transactions re-sent (once each) in this pass. */
  readonly resentRejected: number;
  /** Transactions SEEN_IN_ORPHAN_MEMPOOL past `orphanMaxBlocks`, escalated in this pass. */
  readonly orphansEscalated: number;
  readonly errors: number;
  /** TxIds whose proof was dropped because their block left the main chain (back to waiting). */
  readonly reorged: readonly string[];
  readonly tip: { readonly height: number; readonly hash: string } | null;
}

/** Default of {@link ConfirmationPassOptions.refusedWatchMs}. */
export const REFUSED_WATCH_MS = 10 * 60_000;

/** How many headers a pass walks back from a new tip to link it to the blocks already stored. */
const HEADER_BACKFILL = 16;

/**
 * One confirmation pass, run by the worker's scheduler (one at a time across workers):
 * 1. reorgs: {@link ArcProofStore.reconcile} drops proofs of blocks that left the main chain
 *    (their txIds go back to the watch set atomically);
 * 2. polling: `GET /v1/tx/{txid}` for the watched txIds; MINED BUMPs verified against the
 *    headers source and stored (which unwatches them); refused proofs stay watched;
 * 3. 404 (ARC does not know it) → the same bytes are broadcast again, never other bytes;
 *    SEEN_ON_NETWORK or MINED (polled or re-broadcast) → `onSeen` (the funding pool frees change);
 *    held below SEEN (polled or re-broadcast, not an orphan) → `onHeld` (a failed record is
 *    published again, nothing freed);
 * 4. REJECTED, 461/463/464 → `onRefused` final (the record fails, funding dropped) and unwatched;
 *    a REJECTED for a transient reason ({@link rejectedTransiently}) is first left alone and re-sent
 *    once ({@link TransientRejects}: after a new block or `transientResendMs`); a REJECTED after that
 *    re-broadcast is final;
 *    DOUBLE_SPEND_ATTEMPTED only once a competing transaction is MINED ({@link refusedForGood});
 *    any other 46x → the record fails but the transaction stays watched until `refusedWatchMs`;
 * 5. a new tip: its header (and up to 16 missing ancestors) stored, and a block event published.
 * Faults of the headers source or ARC skip the affected step; the next pass retries it.
 */
export async function runConfirmationPass(
  deps: ConfirmationPassDeps,
  options: ConfirmationPassOptions = {},
): Promise<ConfirmationPassReport> {
  const { store } = deps;
  const before = await store.tip();
  let reorged: string[] = [];
  try {
    const report = await store.reconcile(deps.headers, options.reorgDepth ?? 6, options.now ?? new Date());
    reorged = report.dropped.flatMap((d) => d.txIds);
    for (const d of report.dropped)
      deps.logger?.warn(
        { blockHash: d.blockHash, height: d.height, txIds: d.txIds.length },
        'block left the main chain: its proofs were dropped, the transactions wait for a new proof',
      );
  } catch (e) {
    deps.logger?.warn({ err: (e as Error).message }, 'reconcile skipped: the headers source did not answer');
  }

  const txIds = await store.watched(options.batch ?? 500, options.pollAfterMs ?? 0, options.now ?? new Date());
  const track = await trackConfirmations({
    client: deps.client,
    headers: deps.headers,
    store,
    txIds,
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });

  let refused = 0;
  let doubleSpends = 0;
  const undecided: Refusal[] = [];
  const transient = new TransientRejects(deps.redis, deps.prefix);
  const orphans = new StuckOrphans(deps.redis, deps.prefix);
  const at = {
    now: (options.now ?? new Date()).getTime(),
    height: (await store.tip())?.height ?? -1,
    resendAfterMs: options.transientResendMs ?? TRANSIENT_RESEND_MS,
  };
  let transientWaits = 0;
  const resend: string[] = [];
  const refuse = async (r: Refusal, final: boolean) => {
    const changed = await deps.onRefused(r, { final });
    if (changed !== false) await store.countRejection(refusalCode(r));
    if (!final) return;
    await store.unwatch([r.txId]);
    await transient.forget([r.txId]);
    await orphans.forget([r.txId]);
    refused++;
  };
  // What the chain decided: a problem with the request says nothing (asked again next pass); a
  // DOUBLE_SPEND_ATTEMPTED waits for a competing transaction MINED; REJECTED and a refusal proving
  // the transaction never minable are final; any other refusal fails the record but keeps the
  // transaction watched (within `refusedWatchMs`) in case a broadcast of it is mined after all.
  const read = async (r: Refusal) => {
    if (r.kind === 'request-problem') return;
    if (r.code === 'DOUBLE_SPEND_ATTEMPTED') {
      const final = await refusedForGood(deps.client, r);
      if (final) await refuse(final, true);
      else doubleSpends++;
      return;
    }
    if (rejectedTransiently(r)) {
      // The guard is in Redis: every worker, and a restarted one, re-sends it at most once.
      const decision = await transient.decide(r.txId, at);
      if (decision === 'wait') transientWaits++;
      if (decision === 'resend') resend.push(r.txId);
      if (decision !== 'final') return;
      deps.logger?.warn({ txId: r.txId, reason: r.reason }, 'REJECTED again after its one re-broadcast: final');
    }
    const final = r.code === 'REJECTED' || provesNeverMinable(r);
    await refuse(r, final);
    if (!final) undecided.push(r);
  };
  for (const r of track.rejected) await read(r);
  await transient.forget(track.proven);
  await orphans.forget(track.seen);

  // Orphans that outlast `orphanMaxBlocks`: escalated once, then read as refused.
  const maxBlocks = options.orphanMaxBlocks ?? ORPHAN_MAX_BLOCKS;
  const escalate: string[] = [];
  for (const w of track.waiting) {
    if (w.status !== 'SEEN_IN_ORPHAN_MEMPOOL' || at.height < 0) continue;
    const decision = await orphans.decide(w.txId, at.height, maxBlocks);
    if (decision === 'escalate') escalate.push(w.txId);
    if (decision === 'refuse')
      await read({
        kind: 'refused',
        txId: w.txId,
        code: 460,
        reason: `ARC SEEN_IN_ORPHAN_MEMPOOL for more than ${2 * maxBlocks} blocks: a parent never reached the network`,
        final: false,
        competingTxs: [],
      });
  }
  const withParents = await parentsFirst(deps, escalate, maxBlocks);

  const seen = [...track.seen];
  const held = [...track.held];
  let rebroadcast = 0;
  // Unknown to ARC, or transiently REJECTED and due for its one re-broadcast: the same bytes again.
  const resendNow = [...resend];
  const again = [...new Set([...withParents, ...track.unknown, ...resendNow])];
  if (resendNow.length > 0)
    deps.logger?.warn({ txIds: resendNow }, 'REJECTED for a transient reason: re-sent once, still watched');
  if (again.length > 0) {
    const raws = await deps.rawTxOf(again);
    const txs = again.flatMap((txId, i) => {
      const rawTx = raws[i];
      return rawTx ? [{ txId, rawTx }] : [];
    });
    try {
      for (const outcome of await deps.rebroadcast(txs)) {
        if ('retry' in outcome) continue;
        const { verdict } = outcome;
        if (verdict.kind === 'refused') await read(verdict);
        // A problem with the request says nothing about the transaction: the next pass asks again.
        else if (verdict.kind !== 'request-problem') {
          rebroadcast++;
          if (verdict.kind === 'accepted') seen.push(verdict.txId);
          if (verdict.kind === 'pending' && heldByArc(verdict)) held.push(verdict.txId);
        }
      }
    } catch (e) {
      deps.logger?.warn(
        { err: (e as Error).message, txIds: txs.length },
        're-broadcast failed; the next pass tries again',
      );
    }
  }

  if (deps.unsettled && deps.onSeen) {
    try {
      const waiting = (await deps.unsettled()).filter((txId) => !seen.includes(txId));
      const proofs = await store.inclusions(waiting);
      waiting.forEach((txId, i) => {
        if (proofs[i]?.proof) seen.push(txId);
      });
    } catch (e) {
      deps.logger?.warn({ err: (e as Error).message }, 'unsettled funding not checked; the next pass tries again');
    }
  }
  if (seen.length > 0) await deps.onSeen?.(seen);
  if (held.length > 0) await deps.onHeld?.(held);

  // The bound of an undecided refusal: past it, settled for good.
  const now = (options.now ?? new Date()).getTime();
  const since = await store.watchedSince(undecided.map((r) => r.txId));
  for (const [i, r] of undecided.entries()) {
    const at = since[i];
    if (at != null && now - at >= (options.refusedWatchMs ?? REFUSED_WATCH_MS)) await refuse(r, true);
  }

  const after = await store.tip();
  const newTip = after && (!before || before.hash !== after.hash);
  if (after && (newTip || track.proven.length > 0 || reorged.length > 0)) {
    try {
      await storeTipHeaders(deps, after.hash);
      await publishBlockEvent(deps.redis, deps.prefix, store, after.hash);
    } catch (e) {
      deps.logger?.warn({ err: (e as Error).message }, 'tip header not stored; the next pass tries again');
    }
  }
  return {
    polled: txIds.length,
    proven: track.proven.length,
    refusedProofs: track.failed.length,
    waiting: track.waiting.length,
    rebroadcast,
    refused,
    doubleSpends,
    undecided: undecided.length,
    transientRejects: transientWaits,
    resentRejected: resendNow.length,
    orphansEscalated: escalate.length,
    errors: track.errors.length,
    reorged,
    tip: after,
  };
}

/**
 * Whether a refusal ARC reported while the transaction was watched is final: REJECTED and 46x
 * are; DOUBLE_SPEND_ATTEMPTED is not (ARC documents it ending MINED or REJECTED) until one of its
 * `competingTxs` is MINED, which ARC is asked here. Returns the final refusal (for a double spend,
 * naming the competing transaction mined), or null: keep watching. A competing status that
 * cannot be read now is asked again next pass.
 */
export async function refusedForGood(client: StatusSource, r: Refusal): Promise<Refusal | null> {
  if (r.kind !== 'refused' || r.code !== 'DOUBLE_SPEND_ATTEMPTED') return r;
  for (const competing of r.competingTxs) {
    const answer = await client.status(competing).catch(() => null);
    if (answer?.kind === 'accepted' && answer.status === 'MINED')
      return { ...r, final: true, reason: `${r.reason}; competing ${competing} MINED` };
  }
  return null;
}

/**
 * Escalates stuck orphans: each is logged at warn with the parents ARC does not hold as seen or
 * mined, and returned after those parents that are ours (their stored bytes), to be re-sent in
 * that order. A parent whose status cannot be read now counts as missing.
 */
async function parentsFirst(
  deps: Pick<ConfirmationPassDeps, 'client' | 'rawTxOf' | 'logger'>,
  txIds: readonly string[],
  maxBlocks: number,
): Promise<string[]> {
  if (txIds.length === 0) return [];
  const raws = await deps.rawTxOf(txIds);
  const order: string[] = [];
  for (const [i, txId] of txIds.entries()) {
    const raw = raws[i];
    let parents: string[] = [];
    try {
      parents = raw ? [...new Set(spentTxIds(raw))] : [];
    } catch {
      parents = [];
    }
    const missing: string[] = [];
    for (const parent of parents) {
      const status = await deps.client.status(parent).catch(() => null);
      if (status?.kind !== 'accepted') missing.push(parent);
    }
    const ours = (await deps.rawTxOf(missing)).flatMap((bytes, j) => (bytes ? [missing[j] as string] : []));
    deps.logger?.warn(
      { txId, missingParents: missing, oursResent: ours, maxBlocks },
      'SEEN_IN_ORPHAN_MEMPOOL past ARC_ORPHAN_MAX_BLOCKS: escalated, re-sent once after its parents of ours',
    );
    order.push(...ours, txId);
  }
  return order;
}

/** Stores the tip's header and walks back (bounded) until a stored ancestor, so heights stay contiguous. */
async function storeTipHeaders(deps: Pick<ConfirmationPassDeps, 'headers' | 'store'>, tipHash: string): Promise<void> {
  let hash = tipHash;
  for (let i = 0; i < HEADER_BACKFILL; i++) {
    const known = await deps.store.blockByHash(hash);
    if (known && i > 0) return;
    const header = await deps.headers.headerByHash(hash);
    if (!header || header.confirmations < 1) return;
    await deps.store.storeHeader(header);
    if (header.height === 0) return;
    hash = parseHeader(header.headerHex).prevHash;
  }
}

/** The status query polling needs (ArcClient fits). */
export interface StatusSource {
  status(txId: string): Promise<ArcStatusResult>;
}

export interface TrackOptions extends ProofDeps {
  readonly client: StatusSource;
  readonly txIds: readonly string[];
  /** Status queries in flight at once (default 8). */
  readonly concurrency?: number;
}

export interface TrackReport extends ProveReport {
  /** ARC reported SEEN_ON_NETWORK or MINED (proven or not): the network has the transaction. */
  readonly seen: readonly string[];
  /** Known to ARC but not mined yet (or MINED without block data). */
  readonly waiting: readonly { readonly txId: string; readonly status: string }[];
  /**
   * Of `waiting`, those ARC holds below SEEN_ON_NETWORK with nothing in their way (a pending
   * status {@link heldByArc}: not an orphan): published, not yet seen.
   */
  readonly held: readonly string[];
  /** ARC answered 404 with its problem body: broadcast the same bytes again. */
  readonly unknown: readonly string[];
  /** Refusals ARC reported while polling (REJECTED, DOUBLE_SPEND_ATTEMPTED). */
  readonly rejected: readonly Refusal[];
  /** Status queries that failed transiently (retry later). */
  readonly errors: readonly { readonly txId: string; readonly error: Error }[];
  /** The tip reported by the headers source during this run (also stored), or null if it failed. */
  readonly tipHeight: number | null;
}

/**
 * One polling pass, the ground truth behind callbacks: `GET /v1/tx/{txid}` for each txId with
 * bounded concurrency; MINED answers are verified against the headers source and stored. Also
 * refreshes the stored tip. Never throws for one transaction's fault; see {@link TrackReport}.
 */
export async function trackConfirmations(options: TrackOptions): Promise<TrackReport> {
  const { client, txIds } = options;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const claims: MinedClaim[] = [];
  const waiting: { txId: string; status: string }[] = [];
  const held: string[] = [];
  const seen: string[] = [];
  const unknown: string[] = [];
  const rejected: Refusal[] = [];
  const errors: { txId: string; error: Error }[] = [];
  let next = 0;
  const lane = async () => {
    while (next < txIds.length) {
      const txId = txIds[next++] as string;
      try {
        const r = await client.status(txId);
        if (r.kind === 'accepted') seen.push(txId);
        if (r.kind === 'not-found') unknown.push(txId);
        else if (r.kind === 'accepted' && r.mined) claims.push({ txId, ...r.mined });
        else if (r.kind === 'refused' || r.kind === 'request-problem') rejected.push(r);
        else {
          waiting.push({ txId, status: r.status });
          if (r.kind === 'pending' && heldByArc(r)) held.push(txId);
        }
      } catch (e) {
        errors.push({ txId, error: e instanceof Error ? e : new Error(String(e)) });
      }
    }
  };
  // The headers source's tip, read before the polls: raised to, never set (a callback may prove a
  // newer block meanwhile; only the reorg check lowers the tip).
  const tip = options.headers.tip().then(
    async (t) => {
      await options.store.raiseTip(t);
      return t.height;
    },
    () => null,
  );
  await Promise.all(Array.from({ length: Math.min(concurrency, txIds.length) }, lane));
  const proved = await proveMined(options, claims);
  // A block these polls proved raises the tip too, as a callback's does.
  for (const { hash, height } of proved.blocks) await options.store.raiseTip({ hash, height });
  const tipHeight = await tip;
  return { ...proved, seen, waiting, held, unknown, rejected, errors, tipHeight };
}
