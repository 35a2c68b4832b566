/**
 * Every Redis key of the devnet, from the injected prefix (config.redisPrefix). Nowhere else
 * spells a key; the Lua scripts receive them as KEYS. Fixed keys (hashes keyed by txId or block
 * hash) keep every script's key list static.
 */
export function devnetKeys(prefix: string) {
  const p = `${prefix}:chain`;
  return {
    /** HASH txId -> raw transaction hex (accepted and mined transactions, coinbases included). */
    raw: `${p}:raw`,
    /** HASH "txId:vout" -> txId of the accepted transaction that spends it. */
    spent: `${p}:spent`,
    /** HASH "txId:vout" -> satoshis, for every spendable (non-data) output of a known transaction. */
    outputs: `${p}:outputs`,
    /** ZSET txId scored by arrival order: accepted, not yet mined. */
    mempool: `${p}:mempool`,
    /** Arrival counter for the mempool order. */
    seq: `${p}:seq`,
    /** HASH {hash, height, time}: the chain tip. */
    tip: `${p}:tip`,
    /** HASH blockHash -> 80-byte header hex. */
    headers: `${p}:headers`,
    /** HASH blockHash -> height. */
    heights: `${p}:heights`,
    /** HASH height -> blockHash. */
    hashes: `${p}:hashes`,
    /** HASH blockHash -> txIds of the block in order (coinbase first), comma-separated. */
    blockTxIds: `${p}:block-txids`,
    /** HASH txId -> "blockHash|height|index|node,node,..." (its TSC branch, stored with the block). */
    mined: `${p}:mined`,
    /**
     * Pub/sub CHANNEL (not a key): the producer PUBLISHes a {@link BlockEvent} JSON after each
     * committed block. Subscribers (GraphQL confirmation subscriptions on any instance) listen here.
     */
    blockEvents: `${p}:events:blocks`,
  };
}

export type DevnetKeys = ReturnType<typeof devnetKeys>;

/** The field of an outpoint in `spent` / `outputs`. */
export const outpointField = (txId: string, vout: number): string => `${txId}:${vout}`;

/** The message published on `blockEvents` after a block is committed. */
export interface BlockEvent {
  readonly hash: string;
  readonly height: number;
  /** Header time, seconds since the epoch. */
  readonly time: number;
  /** Transactions in the block, coinbase included. */
  readonly txCount: number;
}
