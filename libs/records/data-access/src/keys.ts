import { SINGLE_PARTITION_UNIT, keyTag } from '@proofline/shared-redis';

/**
 * Every Redis key of the records lib in one records partition (`unit`, shared-redis
 * `Partitions`), built from the deployment's prefix. Nowhere else spells them. They live under
 * the partition's tag (`<prefix>:{<unit>}`), with that partition's shard of the funding pool
 * (chain-wallet `walletKeys`): one accept script stores a record, its chain entry, its outbox
 * entry and its funding together, so on a Redis Cluster they must share a slot. A chain's
 * records all live in the partition of its create. The default unit, `rec`, is the one partition
 * of `REDIS_PARTITIONS=1` (and the layout from before partitions).
 */
export function recordsKeys(prefix: string, unit: string = SINGLE_PARTITION_UNIT) {
  const t = keyTag(prefix, unit);
  return {
    /** HASH: one record (metadata, bytes, publication state); its raw transaction is `tx(…)`. */
    record: (txId: string) => `${t}:records:rec:${txId}`,
    /**
     * STRING: the record's raw transaction, binary. Kept beside the hash, not in it: one value over
     * 64 bytes turns a small hash from a listpack into a hashtable (~1.9 KB instead of ~0.4 KB a
     * record). Records accepted before this key existed keep `rawTx` (hex) in their hash; readers
     * fall back to it.
     */
    tx: (txId: string) => `${t}:records:tx:${txId}`,
    /**
     * STRING: what Extended Format adds to `tx(…)` (per input, the satoshis and locking script it
     * spends; chain-domain `extensionOf`), binary: publication sends `withExtension(tx, ef)`.
     * Only when it is over 64 B (a linked update's two inputs): a shorter one is the record hash's
     * field `ef`, which keeps the hash a listpack. Absent for records accepted before records
     * were sent in EF: they are sent raw.
     */
    ef: (txId: string) => `${t}:records:ef:${txId}`,
    /** LIST: txIds of a linked chain in order (index = position); chainId = the create's txId. */
    chain: (chainId: string) => `${t}:records:chain:${chainId}`,
    /**
     * ZSET (transactional outbox): member txId, score acceptance time (ms); removed once published
     * or rejected. A record is in it exactly while its state is `pending` (accept adds both, settle
     * removes both, revive puts both back): settle-3.lua reads a successor's state from it.
     */
    outbox: `${t}:records:outbox`,
    /**
     * STRING (JSON `{since, httpStatus, detail}`, with a TTL): publication is paused because the
     * chain answered a problem about the request itself, not about a transaction (publication-pause.ts).
     * One for the deployment, under `rec` whatever the partition.
     */
    publicationPaused: `${keyTag(prefix, SINGLE_PARTITION_UNIT)}:records:publication-paused`,
  };
}

export type RecordsKeys = ReturnType<typeof recordsKeys>;
