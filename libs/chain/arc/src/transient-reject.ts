import { forEachTxShard } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import type { Refusal } from '@proofline/chain-domain';
import { arcKeys } from './proof-store';
import type { ArcKeys, ArcShardKeys } from './proof-store';

/**
 * REJECTED reasons that may clear without the transaction changing: ARC relays a peer's REJECT
 * message with the node's reason in `extraInfo` (metamorph `message_handler.go` and the multicaster
 * join `transaction rejected by peer` with `reason: <node reason>`). These node reasons say the
 * mempool could not take the transaction now, not that it is invalid:
 * - `too-long-mempool-chain`: past the node's ancestor limit; clears once ancestors are mined;
 * - `mempool full`, `mempool min fee not met`: the mempool's size and its dynamic fee floor;
 * - `min relay fee not met`, `insufficient priority`: one node's relay policy, not consensus.
 * Any other REJECTED reason is final at once.
 */
export const TRANSIENT_REJECT_REASONS: readonly string[] = [
  'too-long-mempool-chain',
  'mempool full',
  'mempool min fee not met',
  'min relay fee not met',
  'insufficient priority',
];

/** Whether a refusal is ARC's REJECTED for a reason that may clear ({@link TRANSIENT_REJECT_REASONS}). */
export function rejectedTransiently(r: Refusal): boolean {
  if (r.kind !== 'refused' || r.code !== 'REJECTED') return false;
  const reason = r.reason.toLowerCase();
  return TRANSIENT_REJECT_REASONS.some((t) => reason.includes(t));
}

/** Default delay before the one re-broadcast of a transiently REJECTED transaction when no block came. */
export const TRANSIENT_RESEND_MS = 10 * 60_000;

/**
 * The guard of the one re-broadcast of a transiently REJECTED transaction, in Redis so every
 * worker and a restarted one agree: the first REJECTED is noted with the time and tip height
 * (HSETNX); the re-broadcast is claimed once (HSETNX), after a new block (the ancestors it waited
 * for may be mined) or after `resendAfterMs`. A REJECTED after the claim is final.
 */
export class TransientRejects {
  private readonly keys: ArcKeys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = arcKeys(prefix);
  }

  /**
   * What to do with a transient REJECTED of `txId`: `wait` (noted, not due yet), `resend` (this
   * caller claimed the one re-broadcast) or `final` (it was re-sent already: settle for good).
   */
  async decide(
    txId: string,
    at: { readonly now: number; readonly height: number; readonly resendAfterMs: number },
  ): Promise<'wait' | 'resend' | 'final'> {
    const k = this.keys.of(txId);
    if ((await this.redis.hexists(k.transientResent, txId)) === 1) return 'final';
    await this.redis.hsetnx(k.transientRejects, txId, `${at.now}:${at.height}`);
    const first = (await this.redis.hget(k.transientRejects, txId)) ?? `${at.now}:${at.height}`;
    const [ms, height] = first.split(':').map(Number) as [number, number];
    const due = at.height > height || at.now - ms >= at.resendAfterMs;
    if (!due) return 'wait';
    return (await this.redis.hsetnx(k.transientResent, txId, String(at.now))) === 1 ? 'resend' : 'final';
  }

  /** Forgets settled or proven transactions. */
  forget(txIds: readonly string[]): Promise<void> {
    return forgetIn(this.redis, this.keys, (k) => [k.transientRejects, k.transientResent], txIds);
  }
}

/** Default of `ARC_ORPHAN_MAX_BLOCKS`: blocks a transaction may stay SEEN_IN_ORPHAN_MEMPOOL before escalation. */
export const ORPHAN_MAX_BLOCKS = 6;

/**
 * Transactions ARC keeps answering SEEN_IN_ORPHAN_MEMPOOL (a peer lacks a parent), by tip height
 * in Redis so every worker agrees: past `maxBlocks` the transaction is escalated once (claimed with
 * HSETNX), past `maxBlocks` more it is read as refused.
 */
export class StuckOrphans {
  private readonly keys: ArcKeys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = arcKeys(prefix);
  }

  /** What to do with `txId`, polled SEEN_IN_ORPHAN_MEMPOOL at tip `height`: wait, escalate (claimed) or refuse. */
  async decide(txId: string, height: number, maxBlocks: number): Promise<'wait' | 'escalate' | 'refuse'> {
    const k = this.keys.of(txId);
    await this.redis.hsetnx(k.orphans, txId, String(height));
    const [first, escalated] = await this.redis
      .multi()
      .hget(k.orphans, txId)
      .hget(k.orphansEscalated, txId)
      .exec()
      .then((r) => (r ?? []).map(([, v]) => (v == null ? null : Number(v))));
    if (escalated != null) return height - escalated > maxBlocks ? 'refuse' : 'wait';
    if (first == null || height - first <= maxBlocks) return 'wait';
    if ((await this.redis.hsetnx(k.orphansEscalated, txId, String(height))) !== 1) return 'wait';
    await this.redis.incr(this.keys.orphanEscalations);
    return 'escalate';
  }

  /** Forgets transactions seen, proven or settled. */
  forget(txIds: readonly string[]): Promise<void> {
    return forgetIn(this.redis, this.keys, (k) => [k.orphans, k.orphansEscalated], txIds);
  }
}

/** Drops `txIds` from each of their shard's `hashes`: one HDEL per hash and txId shard touched, concurrently (no atomicity needed: each only forgets). */
async function forgetIn(
  redis: RedisClient,
  keys: ArcKeys,
  hashes: (k: ArcShardKeys) => readonly string[],
  txIds: readonly string[],
): Promise<void> {
  await forEachTxShard(txIds, (shard, ids) =>
    Promise.all(hashes(keys.shard(shard)).map((hash) => redis.hdel(hash, ...ids))),
  );
}
