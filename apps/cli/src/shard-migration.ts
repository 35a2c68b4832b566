import { arcKeys, legacyArcKeys } from '@proofline/chain-arc';
import { scanKeys, txShard } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { webhooksKeys } from '@proofline/webhooks-data-access';

/**
 * Splits the per-transaction keys that were one key under `{arc}` or `{wh}` into the 64 txId shards
 * (`TX_SHARDS`, docs/redis-cluster.md "Scaling"): ARC's inclusions, watch set, per-block txId
 * lists and verdict bookkeeping, and the webhooks watch set. Runs after the hash-tag renames
 * (`migrateKeys`), with the service stopped, on a standalone Redis or a cluster (every command
 * names one key).
 *
 * Resumable and idempotent: each entry is copied to its shard without overwriting what is there
 * (ZADD NX, HSETNX), and removed from the old key only after the copies of its batch succeeded;
 * a block's txIds go to its shards' lists after the block's shard set names them (the order
 * `storeProofs` keeps), and the old list is deleted last. A rerun after an interruption copies
 * what is left; a txId copied twice into a block list is read once (readers skip repeats).
 */

export interface ShardMigrationReport {
  /** Entries moved (or, in a dry run, to move), by old key kind. */
  readonly moved: Record<string, number>;
  /** Per-block txId lists split. */
  readonly blocks: number;
}

const BATCH = 500;

export async function migrateToTxShards(
  redis: RedisClient,
  prefix: string,
  options: { dryRun?: boolean } = {},
): Promise<ShardMigrationReport> {
  const dryRun = options.dryRun ?? false;
  const legacy = legacyArcKeys(prefix);
  const arc = arcKeys(prefix);
  const wh = webhooksKeys(prefix);
  const moved: Record<string, number> = {};
  const count = (kind: string, n: number) => (moved[kind] = (moved[kind] ?? 0) + n);

  // Sorted sets: txId -> score.
  const zsets: [kind: string, from: string, to: (txId: string) => string][] = [
    ['arc:unproven', legacy.unproven, (t) => arc.of(t).unproven],
    ['webhooks:watch', wh.legacyWatch, (t) => wh.watchOf(t)],
  ];
  for (const [kind, from, to] of zsets) {
    for (;;) {
      const flat = await redis.zrange(from, 0, BATCH - 1, 'WITHSCORES');
      if (flat.length === 0) break;
      const pairs: [string, string][] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i] as string, flat[i + 1] as string]);
      count(kind, pairs.length);
      if (dryRun) {
        count(kind, (await redis.zcard(from)) - pairs.length);
        break;
      }
      await Promise.all(pairs.map(([txId, score]) => redis.zadd(to(txId), 'NX', score, txId)));
      await redis.zrem(from, ...pairs.map(([txId]) => txId));
    }
  }

  // Hashes keyed by txId hex.
  const hashes: [kind: string, from: string, to: (txId: string) => string][] = [
    ['arc:transient-rejects', legacy.transientRejects, (t) => arc.of(t).transientRejects],
    ['arc:transient-resent', legacy.transientResent, (t) => arc.of(t).transientResent],
    ['arc:orphans', legacy.orphans, (t) => arc.of(t).orphans],
    ['arc:orphans-escalated', legacy.orphansEscalated, (t) => arc.of(t).orphansEscalated],
  ];
  for (const [kind, from, to] of hashes) {
    if (dryRun) {
      count(kind, await redis.hlen(from));
      continue;
    }
    for (;;) {
      const [, flat] = await redis.hscan(from, '0', 'COUNT', BATCH);
      if (flat.length === 0) break;
      const pairs: [string, string][] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i] as string, flat[i + 1] as string]);
      await Promise.all(pairs.map(([txId, value]) => redis.hsetnx(to(txId), txId, value)));
      await redis.hdel(from, ...pairs.map(([txId]) => txId));
      count(kind, pairs.length);
    }
  }

  // Per-block txId lists (STRING of 32-byte ids, or a SET in older stores): the block's shard set
  // first, then each shard's list, then the old list.
  const lists = await scanKeys(redis, `${legacy.blockTxIdsPrefix}*`);
  for (const list of lists) {
    const hash = list.slice(legacy.blockTxIdsPrefix.length);
    const type = await redis.type(list);
    const ids: Buffer[] = [];
    if (type === 'set') ids.push(...(await redis.smembersBuffer(list)));
    else if (type === 'string') {
      const all = (await redis.getBuffer(list)) ?? Buffer.alloc(0);
      for (let i = 0; i + 32 <= all.length; i += 32) ids.push(all.subarray(i, i + 32));
    } else continue;
    count('arc:block', ids.length);
    if (dryRun) continue;
    const byShard = new Map<number, Buffer[]>();
    for (const id of ids) {
      const shard = txShard(id.toString('hex'));
      byShard.set(shard, [...(byShard.get(shard) ?? []), id]);
    }
    if (byShard.size > 0) await redis.sadd(arc.blockShards(hash), ...[...byShard.keys()].map(String));
    await Promise.all(
      [...byShard].map(([shard, shardIds]) => redis.append(arc.shard(shard).blockTxIds(hash), Buffer.concat(shardIds))),
    );
    await redis.del(list);
  }

  // Inclusions last: field txId (32 raw bytes) -> value.
  if (dryRun) count('arc:inc', await redis.hlen(legacy.inclusions));
  else
    for (;;) {
      const [, flat] = await redis.hscanBuffer(legacy.inclusions, '0', 'COUNT', BATCH);
      if (flat.length === 0) break;
      const pairs: [Buffer, Buffer][] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i] as Buffer, flat[i + 1] as Buffer]);
      await Promise.all(
        pairs.map(([txId, value]) => redis.hsetnx(arc.of(txId.toString('hex')).inclusions, txId, value)),
      );
      await redis.hdel(legacy.inclusions, ...pairs.map(([txId]) => txId));
      count('arc:inc', pairs.length);
    }

  return { moved, blocks: lists.length };
}
