import { SINGLE_PARTITION_UNIT, keyTag } from '@proofline/shared-redis';

/**
 * Every Redis key of the funding wallet's shard in one records partition (`unit`, shared-redis
 * `Partitions`), built from the deployment's prefix. Nowhere else spells them. Outpoints are
 * `txId:vout` (lowercase display-order txId). A shard lives under its partition's tag
 * (`<prefix>:{<unit>}`) with the partition's records: the records accept scripts commit a
 * record's funding in the same call that stores it (commit-contract.ts), so on a Redis Cluster
 * they must share a slot. `feePolicy` and `scanHeight` are the deployment's, under `rec`
 * whatever the unit; the default unit `rec` is the one shard of `REDIS_PARTITIONS=1`.
 */
export function walletKeys(prefix: string, unit: string = SINGLE_PARTITION_UNIT) {
  const base = `${keyTag(prefix, unit)}:wallet`;
  const global = `${keyTag(prefix, SINGLE_PARTITION_UNIT)}:wallet`;
  return {
    /** ZSET member outpoint, score satoshis: UTXOs ready to fund a transaction. */
    free: `${base}:free`,
    /** ZSET member outpoint, score lease expiry (ms): UTXOs reserved by a writer. */
    leases: `${base}:leases`,
    /** HASH outpoint → lease owner (who may commit or release it). */
    owners: `${base}:owners`,
    /** HASH outpoint → satoshis, for every outpoint the pool tracks in any state. */
    sats: `${base}:sats`,
    /** HASH outpoint → txId of the transaction that spends it, until that transaction is confirmed or fails. */
    spent: `${base}:spent`,
    /** HASH outpoint → txId that creates it (change, split outputs) until that transaction is accepted by ARC. */
    pending: `${base}:pending`,
    /** HASH of balance counters: {free,leased,pending,spent}{Count,Sats}. */
    counters: `${base}:counters`,
    /** ZSET member txId, score commit time (ms): transactions committed against the pool and not yet settled. */
    txs: `${base}:txs`,
    /** HASH of one unsettled transaction: inputs, outputs, kind, owner, at, rawHex (splits only). */
    tx: (txId: string) => `${base}:tx:${txId}`,
    /**
     * HASH outpoint → `<destination unit>|<satoshis>|<noted at, ms>`: UTXOs taken out of this
     * shard for another (rebalancing, a split's outputs destined elsewhere) until the
     * destination has added them (wallet-move-out-4.lua, wallet-confirm-n.lua).
     */
    moving: `${base}:moving`,
    /**
     * HASH outpoint → '1': UTXOs another shard's note sent here, added once (wallet-arrive-4.lua),
     * until that note is dropped: a finisher that comes again does not add them twice.
     */
    arrived: `${base}:arrived`,
    /** STRING: the lock (token) of whoever finishes this shard's left-over notes in `moving`. */
    moveLock: `${base}:move-lock`,
    /** STRING: the splitter's lock of this shard (token), so one split of it runs at a time across workers. */
    splitLock: `${base}:split-lock`,
    /** STRING (JSON, expires after FEE_POLICY_MAX_AGE_MS): ARC's fee policy as last fetched by any process (fee-rate.ts). */
    feePolicy: `${global}:fee-policy`,
    /** STRING: highest block height whose coinbase the funding scan has imported. */
    scanHeight: `${global}:scan-height`,
  };
}

export type WalletKeys = ReturnType<typeof walletKeys>;
