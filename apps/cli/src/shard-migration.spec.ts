import { randomBytes } from 'node:crypto';
import { ArcProofStore, arcKeys, legacyArcKeys, syntheticBlock } from '@proofline/chain-arc';
import { verifyTscProof } from '@proofline/chain-domain';
import { scanKeys } from '@proofline/shared-redis';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { WebhookStore } from '@proofline/webhooks-data-access';
import { migrateToTxShards } from './shard-migration';

/**
 * The layout before the txId shards, written as that version wrote it (one key under `{arc}` or
 * `{wh}` each), split by the migration and read back through today's stores.
 */
describe('redis migrate-keys: per-transaction keys into the txId shards', () => {
  const prefix = uniquePrefix('shard-mig');
  const { redis, cleanup } = testRedis(prefix);
  afterAll(cleanup);

  it('moves inclusions, block lists, watch sets and verdict bookkeeping; resumable, idempotent, dry run first', async () => {
    const legacy = legacyArcKeys(prefix);
    const arc = arcKeys(prefix);
    const webhooks = new WebhookStore(redis, prefix);
    const store = new ArcProofStore(redis, prefix);

    // A block stored by the old version: its header and top under {arc} (unchanged names) through
    // today's store, then its per-transaction data moved back into the old single keys.
    const block = syntheticBlock(150, 900);
    await store.storeProofs(block.proofs);
    for (const t of block.txIds) {
      const value = await redis.hgetBuffer(arc.of(t).inclusions, Buffer.from(t, 'hex'));
      await redis.hset(legacy.inclusions, Buffer.from(t, 'hex'), value as Buffer);
    }
    for (const sk of arc.shards) await redis.del(sk.inclusions, sk.blockTxIds(block.hash));
    await redis.del(arc.blockShards(block.hash));
    // The old list: half appended as a STRING (with one repeat), as the old script did.
    await redis.set(
      `${legacy.blockTxIdsPrefix}${block.hash}`,
      Buffer.concat([...block.txIds, block.txIds[0]!].map((t) => Buffer.from(t, 'hex'))),
    );
    expect(await store.inclusions(block.txIds)).toEqual(block.txIds.map(() => null));

    const waiting = Array.from({ length: 120 }, () => randomBytes(32).toString('hex'));
    await redis.zadd(legacy.unproven, ...waiting.flatMap((t, i) => [String(1000 + i), t]));
    const hooked = Array.from({ length: 80 }, () => randomBytes(32).toString('hex'));
    await redis.zadd(webhooks.keys.legacyWatch, ...hooked.flatMap((t, i) => [String(5000 + i), t]));
    await redis.hset(legacy.transientRejects, waiting[0]!, '1000:5', waiting[1]!, '1001:5');
    await redis.hset(legacy.orphansEscalated, waiting[2]!, '7');

    const dry = await migrateToTxShards(redis, prefix, { dryRun: true });
    expect(dry).toEqual({
      moved: {
        'arc:unproven': 120,
        'webhooks:watch': 80,
        'arc:transient-rejects': 2,
        'arc:transient-resent': 0,
        'arc:orphans': 0,
        'arc:orphans-escalated': 1,
        'arc:block': 151,
        'arc:inc': 150,
      },
      blocks: 1,
    });
    expect(await redis.hlen(legacy.inclusions)).toBe(150);

    // Interrupted: part of the watch set copied, nothing removed yet.
    for (const t of waiting.slice(0, 30)) await redis.zadd(arc.of(t).unproven, 'NX', '1', t);
    const report = await migrateToTxShards(redis, prefix);
    expect(report.moved).toMatchObject({ 'arc:unproven': 120, 'webhooks:watch': 80, 'arc:inc': 150, 'arc:block': 151 });

    // Today's stores read everything; nothing is left under the old names.
    const read = await store.inclusions(block.txIds);
    read.forEach((inc, i) => {
      expect(inc).toMatchObject({ blockHash: block.hash, blockHeight: 900, index: i });
      expect(verifyTscProof(inc!.proof!, block.txIds[i]!)).toMatchObject({ valid: true });
    });
    expect(await store.txIdsOfBlock(block.hash)).toEqual(block.txIds);
    expect(await store.watchedCount()).toBe(120);
    // A copy already in its shard kept its score (never overwritten); the rest kept theirs.
    expect(await store.watchedSince(waiting.slice(29, 31))).toEqual([1, 1030]);
    expect(await webhooks.watchedCount()).toBe(80);
    expect((await webhooks.dueWatched(new Date(6000), 64 * 80)).txIds.sort()).toEqual([...hooked].sort());
    expect(await redis.hget(arc.of(waiting[1]!).transientRejects, waiting[1]!)).toBe('1001:5');
    expect(await redis.hget(arc.of(waiting[2]!).orphansEscalated, waiting[2]!)).toBe('7');
    for (const key of [legacy.inclusions, legacy.unproven, webhooks.keys.legacyWatch, legacy.transientRejects])
      expect(await redis.exists(key)).toBe(0);
    expect(await scanKeys(redis, `${legacy.blockTxIdsPrefix}*`)).toEqual([]);

    // The drop walk finds the moved block in its shards.
    expect((await store.dropBlock(block.hash, 900)).sort()).toEqual([...block.txIds].sort());

    // Run again: nothing to move.
    const again = await migrateToTxShards(redis, prefix);
    expect(Object.values(again.moved).every((n) => n === 0)).toBe(true);
    expect(again.blocks).toBe(0);
  });
});
