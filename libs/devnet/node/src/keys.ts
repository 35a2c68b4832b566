import { keyTag } from '@proofline/shared-redis';

/**
 * Every Redis key of the devnet node, under `keyTag(prefix, 'devnet')` (`<prefix>:{devnet}:chain:*`,
 * `prefix` being the deployment's REDIS_PREFIX, or a test's prefix). Nowhere else spells a key; the
 * Lua scripts receive them as KEYS. Fixed keys (hashes keyed by txId or block hash) keep every
 * script's key list static.
 *
 * One hash tag for the whole node: the block commit (`commit-block-9.lua`) moves txIds from the
 * mempool into `mined` and writes the block, its coinbase (`raw`, `outputs`) and the tip in one
 * compare-and-set, and the mempool door (`node-accept-7.lua`) reads `mined` and the tip to decide
 * a spend, so the UTXO set, the mempool and the per-block data are one unit of atomicity; the
 * node's own bookkeeping (verdicts, orphans, callbacks) is written beside them in MULTIs. On a
 * Redis Cluster the node's chain is therefore on one master, which is what a devnet needs.
 */
export function devnetKeys(prefix: string) {
  const p = `${keyTag(prefix, 'devnet')}:chain`;
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
    /** Devnet node: HASH txId -> JSON {txStatus, extraInfo, competingTxs} of a submission it refused after storing its verdict (double spends). */
    verdicts: `${p}:node:verdicts`,
    /** Devnet node: SET per first spender of the double-spend losers it beat (see {@link competitorsKey}). */
    competitorsBase: `${p}:node:competitors`,
    /** Devnet node: HASH txId -> JSON array of callback registrations {url, token, batch, full}. */
    callbacks: `${p}:node:callbacks`,
    /** Devnet node: ZSET of pending callback deliveries (JSON) scored by due time (ms). */
    callbackQueue: `${p}:node:callback-queue`,
    /** Devnet node: height of the last block whose MINED callbacks were queued (a restart queues the rest). */
    callbackHeight: `${p}:node:callback-height`,
    /** Devnet node: delivery id counter (makes every queued delivery a distinct member). */
    callbackSeq: `${p}:node:callback-seq`,
    /** Devnet node: HASH txId -> ms epoch at which an accepted transaction reports SEEN_ON_NETWORK (the time-to-SEEN reality). */
    seenAt: `${p}:node:seen-at`,
    /** Devnet node: HASH txId -> JSON {rawHex, efInputs} of an EF transaction held as SEEN_IN_ORPHAN_MEMPOOL. */
    orphans: `${p}:node:orphans`,
    /** Devnet node: ZSET per unknown parent of the orphans waiting for it, by arrival (see {@link orphansOfKey}). */
    orphansOfBase: `${p}:node:orphans-of`,
  };
}

export type DevnetKeys = ReturnType<typeof devnetKeys>;

/** Devnet node: SET of the txIds that tried to double-spend an output `winner` spends first. */
export const competitorsKey = (k: DevnetKeys, winner: string): string => `${k.competitorsBase}:${winner}`;

/** Devnet node: ZSET (by arrival) of the orphan txIds that spend an output of `parent`, not yet known. */
export const orphansOfKey = (k: DevnetKeys, parent: string): string => `${k.orphansOfBase}:${parent}`;

/** The field of an outpoint in `spent` / `outputs`. */
export const outpointField = (txId: string, vout: number): string => `${txId}:${vout}`;

/**
 * Where the node's chain lived before its keys carried a hash tag (`<prefix>:devnet:chain:*`; the
 * README's "Redis keys" maps every old name to its new one). Read only to refuse starting a new
 * chain beside an unmigrated one.
 */
export const legacyDevnetTipKey = (prefix: string): string => `${prefix}:devnet:chain:tip`;
