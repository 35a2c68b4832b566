import { keyTag } from './keys';
import { unitInRange } from './partitions';

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
