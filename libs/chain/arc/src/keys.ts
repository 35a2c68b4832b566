import { keyTag } from '@proofline/shared-redis';

/**
 * Every Redis key of the ARC proof store, from the injected prefix (config.redisPrefix). Nowhere
 * else spells a key; the Lua scripts receive them as KEYS. Hashes and txIds are stored as 32 raw
 * bytes (not 64 hex characters) where there is one per record, to keep memory per record small.
 *
 * Every key is under the `arc` hash tag (`<prefix>:{arc}:arc:…`): the proof store's MULTIs and
 * scripts touch several of them at once, so on a Redis Cluster they share one slot. The block
 * event channel keeps its untagged name: pub/sub is not slotted (PUBLISH reaches every node).
 */
export function arcKeys(prefix: string) {
  const p = `${keyTag(prefix, 'arc')}:arc`;
  return {
    /** HASH txId (32 raw bytes) -> inclusion: blockHash(32) ‖ index u32le ‖ duplicate mask u32le ‖ depth u8 ‖ nodes below the block's shared top (32 each); older values: no depth byte, every node. */
    inclusions: `${p}:inc`,
    /** HASH blockHash (32 raw bytes) -> 80-byte header ‖ height u32le (one per block). */
    blocks: `${p}:blocks`,
    /** HASH height -> blockHash hex of the block last stored at that height. */
    heights: `${p}:heights`,
    /** ZSET blockHash hex scored by height: every stored block, for reconcile's range scan. */
    byHeight: `${p}:by-height`,
    /** HASH {height, hash}: the best chain's tip as the headers source last reported it. */
    tip: `${p}:tip`,
    /** ZSET txId hex -> ms first watched: published transactions without a stored proof (the tracker polls these). */
    unproven: `${p}:unproven`,
    /** Pub/sub channel of block events (JSON `BlockEvent`), published when the tracker sees a new tip or proves txs in a new block. */
    blockEvents: `${prefix}:arc:events:blocks`,
    /** STRING lock token of the running confirmation pass (one at a time across workers). */
    confirmLock: `${p}:confirm-lock`,
    /** HASH code -> count of transactions ARC rejected (metrics). */
    rejections: `${p}:rejections`,
    /** HASH txId hex -> `ms:height`: when (and at which tip) ARC first answered REJECTED for a transient reason. */
    transientRejects: `${p}:transient-rejects`,
    /** HASH txId hex -> ms: the one re-broadcast of a transiently REJECTED transaction, claimed with HSETNX. */
    transientResent: `${p}:transient-resent`,
    /** HASH txId hex -> tip height when a poll first answered SEEN_IN_ORPHAN_MEMPOOL. */
    orphans: `${p}:orphans`,
    /** HASH txId hex -> tip height of its escalation (the one re-send with its parents), claimed with HSETNX. */
    orphansEscalated: `${p}:orphans-escalated`,
    /** STRING count of orphans escalated since the deployment started (metrics). */
    orphanEscalations: `${p}:orphan-escalations`,
    /** STRING of the txIds (32 raw bytes each, appended) with a proof in the block `hash` (display hex); a SET in stores written before. */
    blockTxIds: (hash: string) => `${p}:block:${hash}`,
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
