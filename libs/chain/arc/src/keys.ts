import { ALL_TX_SHARDS, keyTag, txShard, txShardTag } from '@proofline/shared-redis';

/** The txId-shard family of ARC's per-transaction keys (`<prefix>:{atx<shard>.<n>}:arc:…`). */
export const ARC_SHARD_FAMILY = 'atx';

/**
 * The keys of one txId shard (`txShard`, 0..63) of the proof store: everything ARC keeps per
 * transaction. A script touches the keys of one shard at a time; nothing here is read together with
 * block-level data in one command.
 */
export function arcShardKeys(prefix: string, shard: number) {
  const p = `${txShardTag(prefix, ARC_SHARD_FAMILY, shard)}:arc`;
  return {
    shard,
    /** HASH txId (32 raw bytes) -> inclusion: blockHash(32) ‖ index u32le ‖ duplicate mask u32le ‖ depth u8 ‖ nodes below the block's shared top (32 each); older values: no depth byte, every node. */
    inclusions: `${p}:inc`,
    /** ZSET txId hex -> ms first watched: published transactions of this shard without a stored proof (the tracker polls these). */
    unproven: `${p}:unproven`,
    /** STRING of this shard's txIds (32 raw bytes each, appended) with a proof in block `hash` (display hex); a SET in stores written before. */
    blockTxIds: (hash: string) => `${p}:block:${hash}`,
    /**
     * STRING with a TTL: block `hash` is being dropped from this shard (the reorg walk). While it
     * exists, a proof into that block is refused here (`arc-store-shard-n.lua`).
     */
    dropping: (hash: string) => `${p}:dropping:${hash}`,
    /** HASH txId hex -> `ms:height`: when (and at which tip) ARC first answered REJECTED for a transient reason. */
    transientRejects: `${p}:transient-rejects`,
    /** HASH txId hex -> ms: the one re-broadcast of a transiently REJECTED transaction, claimed with HSETNX. */
    transientResent: `${p}:transient-resent`,
    /** HASH txId hex -> tip height when a poll first answered SEEN_IN_ORPHAN_MEMPOOL. */
    orphans: `${p}:orphans`,
    /** HASH txId hex -> tip height of its escalation (the one re-send with its parents), claimed with HSETNX. */
    orphansEscalated: `${p}:orphans-escalated`,
  };
}

export type ArcShardKeys = ReturnType<typeof arcShardKeys>;

/**
 * Every Redis key of the ARC proof store, from the injected prefix (config.redisPrefix). Nowhere
 * else spells a key; the Lua scripts receive them as KEYS. Hashes and txIds are stored as 32 raw
 * bytes (not 64 hex characters) where there is one per record, to keep memory per record small.
 *
 * Two kinds of hash tag. Block-level data (one entry per block, not per record: headers, heights,
 * the tip, each block's shared top nodes, which shards hold its inclusions, the owner index, the
 * pass lock, counters) is under `{arc}` (`<prefix>:{arc}:arc:…`). Per-transaction data
 * (inclusions, the watch set, per-block txId lists, verdict bookkeeping) is split into the 64 txId
 * shards ({@link arcShardKeys}, `shard(i)`, `of(txId)`), tags chosen by slot range, so it spreads
 * over the masters. The block event channel keeps its untagged name: pub/sub is not slotted
 * (PUBLISH reaches every node).
 */
export function arcKeys(prefix: string) {
  const p = `${keyTag(prefix, 'arc')}:arc`;
  const shards = ALL_TX_SHARDS.map((s) => arcShardKeys(prefix, s));
  return {
    /** The keys of txId shard `s`. */
    shard: (s: number): ArcShardKeys => shards[s] as ArcShardKeys,
    /** The keys of the shard holding `txId`. */
    of: (txId: string): ArcShardKeys => shards[txShard(txId)] as ArcShardKeys,
    /** Every shard's keys, by shard. */
    shards: shards as readonly ArcShardKeys[],
    /** HASH blockHash (32 raw bytes) -> 80-byte header ‖ height u32le (one per block). */
    blocks: `${p}:blocks`,
    /** HASH height -> blockHash hex of the block last stored at that height. */
    heights: `${p}:heights`,
    /** ZSET blockHash hex scored by height: every stored block, for reconcile's range scan. */
    byHeight: `${p}:by-height`,
    /** HASH {height, hash}: the best chain's tip as the headers source last reported it. */
    tip: `${p}:tip`,
    /** Pub/sub channel of block events (JSON `BlockEvent`), published when the tracker sees a new tip or proves txs in a new block. */
    blockEvents: `${prefix}:arc:events:blocks`,
    /** STRING lock token of the running confirmation pass (one at a time across workers). */
    confirmLock: `${p}:confirm-lock`,
    /** HASH code -> count of transactions ARC rejected (metrics). */
    rejections: `${p}:rejections`,
    /** STRING count of orphans escalated since the deployment started (metrics). */
    orphanEscalations: `${p}:orphan-escalations`,
    /**
     * SET of the txId shards (decimal) holding inclusions in block `hash` (display hex): written
     * before any of them (`storeProofs`), walked by a drop (`dropBlock`) and deleted last.
     */
    blockShards: (hash: string) => `${p}:block-shards:${hash}`,
    /** HASH level u8 ‖ position u32le -> node (32 raw bytes): the top levels of the proofs in block `hash` (display hex), stored once for all its records. */
    blockTop: (hash: string) => `${p}:top:${hash}`,
    /**
     * SET of the owners (for records: tenants) with a txId indexed in block `hash` (display hex):
     * which owners' indexes a drop of that block must clean (`dropBlock`).
     */
    blockOwners: (hash: string) => `${p}:block-owners:${hash}`,
    /** ZSET block hash hex scored by height: the blocks holding txIds of `owner` (a tenant). */
    ownerBlocks: (owner: string) => `${p}:owner:${owner}:blocks`,
    /**
     * HASH block hash hex -> the txIds of `owner` proven in that block, 32 raw bytes each, appended
     * as their proofs are stored (block order within one batch): one key per owner, so moving a txId
     * between blocks stays in one declared key.
     */
    ownerTxIds: (owner: string) => `${p}:owner:${owner}:txids`,
  };
}

export type ArcKeys = ReturnType<typeof arcKeys>;

/**
 * The per-transaction keys as they were before the txId shards, all under `{arc}`: what
 * `redis migrate-keys` splits into the shards. Nothing else reads them.
 */
export function legacyArcKeys(prefix: string) {
  const p = `${keyTag(prefix, 'arc')}:arc`;
  return {
    inclusions: `${p}:inc`,
    unproven: `${p}:unproven`,
    /** The pattern of the per-block txId lists (`<p>:block:<hash>`). */
    blockTxIdsPrefix: `${p}:block:`,
    transientRejects: `${p}:transient-rejects`,
    transientResent: `${p}:transient-resent`,
    orphans: `${p}:orphans`,
    orphansEscalated: `${p}:orphans-escalated`,
  };
}

/** The inclusions hash holding `txId`'s proof, for readers outside this lib (the records' depth cap). */
export function inclusionsKeyOf(prefix: string): (txId: string) => string {
  const keys = arcKeys(prefix);
  return (txId) => keys.of(txId).inclusions;
}
