import calculateSlot from 'cluster-key-slot';
import { unitInRange } from './partitions';

/*
 * Where keys live: the hash tag that puts the keys of one unit of atomicity in one slot, the keys
 * the shared layer owns, the slot of a key and the grouping of keys by slot for multi-key
 * commands, and the txId shards of per-transaction data. The records partitions (a record's unit)
 * are in partitions.ts; it and this module import each other's functions, so neither may call
 * the other while it loads.
 */

/**
 * The first part of every key of one unit of atomicity: `<prefix>:{<unit>}`. Redis Cluster hashes
 * only what is inside the braces, so every key of a unit lands in one slot and a Lua script or
 * MULTI may touch any of them together; keys of different units may live on different masters.
 * Units: `rec` (records, their transactions and chains, the outbox, the funding pool), `arc` (ARC
 * block data, inclusions, verdict bookkeeping), `idty` (identity keys), `wh` (webhooks), `proc`
 * (process liveness, generated secrets), `devnet` (the devnet node's chain), one per tenant for
 * rate limits and idempotency, and one per BullMQ queue.
 */
export function keyTag(prefix: string, unit: string): string {
  return `${prefix}:{${unit}}`;
}

/** Keys owned by the shared layer (process liveness, generated secrets). Nowhere else spells them. */
export function sharedKeys(prefix: string) {
  const p = keyTag(prefix, 'proc');
  return {
    /** ZSET member = worker instance id, score = last heartbeat (ms). */
    workerHeartbeats: `${p}:workers:heartbeats`,
    /** Development JWT secret generated on first use when AUTH_JWT_SECRET is not set. */
    devJwtSecret: `${p}:auth:dev-jwt-secret`,
    /** SET of the records partition counts (`REDIS_PARTITIONS` > 1) processes have run with: the live layouts. */
    partitionLayouts: `${p}:partitions:layouts`,
  };
}

/** The Redis Cluster hash slot of `key` (0..16383): what `{…}` in a key name decides. */
export function slotOf(key: string): number {
  return calculateSlot(key);
}

/**
 * Groups positions `0..keys.length-1` by the hash slot of their key, in the order the slots
 * first appear, each group's positions ascending. A multi-key command (MGET, a `-n` script, a
 * pipeline on a cluster client) takes the keys of one group: Redis Cluster refuses keys of two
 * slots in one command (CROSSSLOT). Keys under one `keyTag` form one group, so a caller whose
 * keys share a tag today makes exactly one call, and keeps working unchanged once they spread
 * over tags (e.g. records partitions).
 */
export function groupBySlot(keys: readonly string[]): number[][] {
  const groups = new Map<number, number[]>();
  keys.forEach((key, i) => {
    const slot = calculateSlot(key);
    const group = groups.get(slot);
    if (group) group.push(i);
    else groups.set(slot, [i]);
  });
  return [...groups.values()];
}

/**
 * Answers one value per key, in order, from `read` called once per slot group (concurrently) with
 * that group's keys and positions: `read` returns the group's values in the order of its keys.
 */
export async function readBySlot<T>(
  keys: readonly string[],
  read: (keys: string[], positions: number[]) => Promise<readonly T[]>,
): Promise<T[]> {
  const out = new Array<T>(keys.length);
  await Promise.all(
    groupBySlot(keys).map(async (positions) => {
      const values = await read(
        positions.map((i) => keys[i] as string),
        positions,
      );
      if (values.length !== positions.length)
        throw new Error(`a slot group of ${positions.length} keys answered ${values.length} values`);
      positions.forEach((p, j) => (out[p] = values[j] as T));
    }),
  );
  return out;
}

/**
 * Number of txId shards of per-transaction data that is not a record's (ARC's inclusions and watch
 * set, the webhooks watch set). Fixed, never configured: a txId's shard is read off the txId
 * itself, so no index is needed, and growing the records partitions moves nothing here. Changing
 * it would move every such key (a stop and `redis migrate-keys`).
 */
export const TX_SHARDS = 64;

/** The shard of a txId (display hex): its leading 6 bits, so shards fill evenly (txIds are hashes). */
export function txShard(txId: string): number {
  const lead = Number.parseInt(txId.slice(0, 2), 16);
  if (!/^[0-9a-fA-F]{2}/.test(txId) || Number.isNaN(lead))
    throw new RangeError(`not a hex txId: ${JSON.stringify(txId.slice(0, 16))}`);
  return lead >> 2;
}

/**
 * `<prefix>:{<family><shard>.<n>}`: the first part of every key of txId shard `shard` of a data
 * family (e.g. `atx` for ARC, `whw` for the webhooks watch set). Tags are chosen by slot range
 * (`unitInRange`), so the 64 shards of a family fall 21/22/21 on three equal masters.
 */
export function txShardTag(prefix: string, family: string, shard: number): string {
  return keyTag(prefix, unitInRange(family, shard, TX_SHARDS));
}

/** Every shard index, 0..TX_SHARDS-1. */
export const ALL_TX_SHARDS: readonly number[] = Array.from({ length: TX_SHARDS }, (_, i) => i);

/** The positions of `txIds` grouped by shard (ascending positions within a shard). */
export function groupByTxShard(txIds: readonly string[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  txIds.forEach((txId, i) => {
    const shard = txShard(txId);
    const group = out.get(shard);
    if (group) group.push(i);
    else out.set(shard, [i]);
  });
  return out;
}

/**
 * Runs `run` once per txId shard holding some of `txIds` (with that shard and its txIds, in their
 * order), concurrently: a command per shard, as a key of one shard takes only its own txIds.
 */
export async function forEachTxShard(
  txIds: readonly string[],
  run: (shard: number, ids: string[]) => Promise<unknown>,
): Promise<void> {
  if (txIds.length === 0) return;
  await Promise.all(
    [...groupByTxShard(txIds)].map(([shard, positions]) =>
      run(
        shard,
        positions.map((i) => txIds[i] as string),
      ),
    ),
  );
}
