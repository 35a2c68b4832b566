import { walletKeys } from '@proofline/chain-wallet';
import { recordsKeys } from '@proofline/records-data-access';
import type { RecordsKeys } from '@proofline/records-data-access';
import {
  PartitionIndex,
  Partitions,
  SINGLE_PARTITION_UNIT,
  TX_INDEX_BUCKETS,
  legacyTxIndexKey,
  scanKeys,
} from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';

/**
 * Moves a deployment's records, chains, outbox and funding pool from the one-partition layout
 * (everything under `{rec}`: `REDIS_PARTITIONS=1`, and every deployment from before partitions)
 * into `count` partitions (docs/redis-cluster.md, "Partitions"), on a standalone Redis or a
 * cluster alike: every step is a command on one key or one slot.
 *
 * The service MUST be stopped (a writer of the old layout would race the moves; the caller checks
 * the workers' heartbeats). Idempotent and resumable: where a record, a chain or a UTXO goes is a
 * function of its id (not of the order of the walk), a copy never overwrites what an earlier run
 * copied, and each old key is deleted only after its copy and its index entry exist; the shards'
 * counters are computed afresh from their contents at the end of every run.
 *
 * - A record goes to its chain's partition (the create's txId picks it); its index entry is
 *   written first, then its hash, raw and EF transactions are copied (DUMP/RESTORE, TTL kept),
 *   its outbox entry added there with its due time, and the old keys deleted.
 * - A chain list goes with its create.
 * - The pool: an unsettled transaction (with its spent inputs, pending outputs and their
 *   satoshis) goes to its record's shard (a split to the first shard, indexed there); free UTXOs,
 *   and leased ones (a stopped service holds no lease worth keeping), are spread over the shards
 *   by outpoint. The publication pause, ARC's fee policy and the scan cursor stay under `rec`.
 */
export interface PartitionMigrationReport {
  readonly partitions: number;
  records: number;
  chains: number;
  outboxEntries: number;
  unsettledTransactions: number;
  freeUtxos: number;
  /** Leased UTXOs made free (leases do not survive a stop). */
  leasesFreed: number;
}

export interface PartitionMigrationOptions {
  /** Count what would move; change nothing. */
  readonly dryRun?: boolean;
  /** Records per batch of concurrent moves. */
  readonly batch?: number;
}

/** The partition of a chain or an outpoint: a function of its id, so an interrupted run resumes where it left off. */
function spread(partitions: Partitions, id: string): string {
  return partitions.unit(Number.parseInt(id.slice(0, 8), 16) % partitions.count);
}

export async function migrateToPartitions(
  redis: RedisClient,
  prefix: string,
  count: number,
  options: PartitionMigrationOptions = {},
): Promise<PartitionMigrationReport> {
  const report: PartitionMigrationReport = {
    partitions: count,
    records: 0,
    chains: 0,
    outboxEntries: 0,
    unsettledTransactions: 0,
    freeUtxos: 0,
    leasesFreed: 0,
  };
  if (count === 1) return report;
  const partitions = new Partitions(prefix, count, 0);
  const index = new PartitionIndex(redis, prefix);
  const old = recordsKeys(prefix, SINGLE_PARTITION_UNIT);
  const keySets = new Map<string, RecordsKeys>();
  const keysOf = (unit: string): RecordsKeys => {
    let keys = keySets.get(unit);
    if (!keys) keySets.set(unit, (keys = recordsKeys(prefix, unit)));
    return keys;
  };
  const batch = options.batch ?? 200;
  const dry = options.dryRun === true;

  // Records, each to its chain's partition.
  const recordHead = old.record('');
  const recordKeys = await scanKeys(redis, `${recordHead}*`);
  for (let i = 0; i < recordKeys.length; i += batch) {
    await Promise.all(
      recordKeys.slice(i, i + batch).map(async (key) => {
        const txId = key.slice(recordHead.length);
        const chainId = (await redis.hget(key, 'chainId')) || txId;
        const unit = spread(partitions, chainId);
        const to = keysOf(unit);
        const due = await redis.zscore(old.outbox, txId);
        report.records += 1;
        if (due !== null) report.outboxEntries += 1;
        if (dry) return;
        await redis.hset(...index.entry(txId, unit));
        await copy(redis, key, to.record(txId));
        await copy(redis, old.tx(txId), to.tx(txId));
        await copy(redis, old.ef(txId), to.ef(txId));
        if (due !== null) await redis.zadd(to.outbox, due, txId);
        await redis.del(key, old.tx(txId), old.ef(txId));
        if (due !== null) await redis.zrem(old.outbox, txId);
      }),
    );
  }

  // Chains, with their creates.
  const chainHead = old.chain('');
  for (const key of await scanKeys(redis, `${chainHead}*`)) {
    const chainId = key.slice(chainHead.length);
    report.chains += 1;
    if (dry) continue;
    await copy(redis, key, keysOf(spread(partitions, chainId)).chain(chainId));
    await redis.del(key);
  }

  // The funding pool.
  const pool = walletKeys(prefix, SINGLE_PARTITION_UNIT);
  const txs = await redis.zrange(pool.txs, 0, -1, 'WITHSCORES');
  for (let i = 0; i + 1 < txs.length; i += 2) {
    const txId = txs[i] as string;
    const at = txs[i + 1] as string;
    report.unsettledTransactions += 1;
    if (dry) continue;
    // A record's transaction goes to its record's shard; a split (no record) to the first.
    let unit = await index.lookupOne(txId);
    if (unit === null) {
      unit = partitions.unit(0);
      await redis.hset(...index.entry(txId, unit));
    }
    const to = walletKeys(prefix, unit);
    const [inputs, outputs] = await redis.hmget(pool.tx(txId), 'inputs', 'outputs');
    const spent = (inputs ?? '').split(',').filter(Boolean);
    const pending = (outputs ?? '')
      .split(',')
      .filter(Boolean)
      .map((o) => o.slice(0, o.indexOf('=')));
    for (const op of [...spent, ...pending]) {
      const sats = await redis.hget(pool.sats, op);
      if (sats !== null) await redis.hset(to.sats, op, sats);
    }
    for (const op of spent) {
      const by = await redis.hget(pool.spent, op);
      if (by !== null) await redis.hset(to.spent, op, by);
    }
    for (const op of pending) {
      const by = await redis.hget(pool.pending, op);
      if (by !== null) await redis.hset(to.pending, op, by);
    }
    await copy(redis, pool.tx(txId), to.tx(txId));
    await redis.zadd(to.txs, at, txId);
    if (spent.length > 0) await redis.hdel(pool.spent, ...spent);
    if (pending.length > 0) await redis.hdel(pool.pending, ...pending);
    if (spent.length + pending.length > 0) await redis.hdel(pool.sats, ...spent, ...pending);
    await redis.del(pool.tx(txId));
    await redis.zrem(pool.txs, txId);
  }
  const leased = await redis.zrange(pool.leases, 0, -1);
  const free = await redis.zrange(pool.free, 0, -1, 'WITHSCORES');
  const utxos: Array<[op: string, sats: string | null, leased: boolean]> = leased.map((op) => [op, null, true]);
  for (let i = 0; i + 1 < free.length; i += 2) utxos.push([free[i] as string, free[i + 1] as string, false]);
  for (const [op, known, wasLeased] of utxos) {
    if (wasLeased) report.leasesFreed += 1;
    else report.freeUtxos += 1;
    if (dry) continue;
    const sats = known ?? (await redis.hget(pool.sats, op));
    if (sats === null) continue;
    const to = walletKeys(prefix, spread(partitions, op));
    await redis.hset(to.sats, op, sats);
    await redis.zadd(to.free, sats, op);
    await redis.hdel(pool.sats, op);
    await redis.zrem(wasLeased ? pool.leases : pool.free, op);
    if (wasLeased) await redis.hdel(pool.owners, op);
  }
  if (!dry) {
    await redis.del(pool.counters, pool.splitLock);
    for (const unit of partitions.units) await recount(redis, walletKeys(prefix, unit));
  }
  return report;
}

/**
 * Copies `from` to `to` with its TTL (DUMP/RESTORE: works across slots and nodes). A missing
 * source, or a destination an earlier run created, is left as it is.
 */
async function copy(redis: RedisClient, from: string, to: string): Promise<void> {
  const [dump, ttl] = await Promise.all([redis.dumpBuffer(from), redis.pttl(from)]);
  if (dump === null) return;
  try {
    await redis.restore(to, ttl > 0 ? ttl : 0, dump);
  } catch (err) {
    if (!(err instanceof Error && err.message.startsWith('BUSYKEY'))) throw err;
  }
}

/** Sets a shard's counters from its contents (what the pool's scripts keep in step). */
async function recount(redis: RedisClient, k: ReturnType<typeof walletKeys>): Promise<void> {
  const sum = async (ops: string[]) =>
    ops.length === 0 ? 0 : (await redis.hmget(k.sats, ...ops)).reduce((a, v) => a + Number(v ?? 0), 0);
  const free = await redis.zrange(k.free, 0, -1, 'WITHSCORES');
  let freeSats = 0;
  for (let i = 1; i < free.length; i += 2) freeSats += Number(free[i]);
  const leased = await redis.zrange(k.leases, 0, -1);
  const pending = await redis.hkeys(k.pending);
  const spent = await redis.hkeys(k.spent);
  if (free.length + leased.length + pending.length + spent.length === 0) {
    await redis.del(k.counters);
    return;
  }
  await redis.hset(k.counters, {
    freeCount: free.length / 2,
    freeSats,
    leasedCount: leased.length,
    leasedSats: await sum(leased),
    pendingCount: pending.length,
    pendingSats: await sum(pending),
    spentCount: spent.length,
    spentSats: await sum(spent),
  });
}

export interface TxIndexConversionReport {
  /** Entries of the index's form before sub-buckets rewritten in today's form. */
  entries: number;
}

/**
 * Rewrites the txId → partition index from its form before sub-buckets (a HASH per bucket, the
 * txId in hex → the unit) into today's (`PartitionIndex`: small HASHes, raw txId bytes → the
 * encoded unit) and deletes the old fields. Readers find either form, so it may run while the
 * service runs; each entry is written in its new form before its old field is deleted, so a reader
 * never misses it. Idempotent and resumable.
 */
export async function convertLegacyTxIndex(
  redis: RedisClient,
  prefix: string,
  options: { readonly dryRun?: boolean } = {},
): Promise<TxIndexConversionReport> {
  const report: TxIndexConversionReport = { entries: 0 };
  const index = new PartitionIndex(redis, prefix);
  for (let bucket = 0; bucket < TX_INDEX_BUCKETS; bucket++) {
    const key = legacyTxIndexKey(prefix, bucket.toString(16).padStart(2, '0'));
    let cursor = '0';
    do {
      const [next, flat] = await redis.hscan(key, cursor, 'COUNT', 500);
      cursor = next;
      const fields: string[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const txId = flat[i] as string;
        report.entries += 1;
        if (options.dryRun) continue;
        await redis.hset(...index.entry(txId, flat[i + 1] as string));
        fields.push(txId);
      }
      if (fields.length > 0) await redis.hdel(key, ...fields);
    } while (cursor !== '0');
  }
  return report;
}
