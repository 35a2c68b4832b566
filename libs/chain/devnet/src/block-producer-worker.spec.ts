import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { CHAIN_BLOCK_SCHEDULER_ID, chainBlockResult, merkleRoot } from '@proofline/chain-domain';
import { BsvTransactionBuilder, deriveChainKeys } from '@proofline/chain-bsv';
import { systemClock } from '@proofline/shared-config';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { eventually, testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { DevnetBlockProducer, DevnetPublisher, DevnetReader, startBlockProducerWorker } from './index';
import type { RunningBlockProducer } from './index';

describe('block producer as a BullMQ job scheduler', () => {
  const prefix = uniquePrefix('blocks');
  const { redis, cleanup } = testRedis(prefix);
  const redis2 = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  const keys = deriveChainKeys();
  const running: RunningBlockProducer[] = [];

  afterAll(async () => {
    await Promise.all(running.map((r) => r.close()));
    await redis2.quit();
    await cleanup();
  });

  it('two workers produce one linear chain, one block per tick, including submitted transactions', async () => {
    const start = (r: Redis) =>
      startBlockProducerWorker({
        connection: redis2,
        redisPrefix: prefix,
        blockIntervalMs: 300,
        producer: new DevnetBlockProducer(r, prefix, { keys }),
        clock: systemClock,
      });
    running.push(await start(redis), await start(redis2));

    const publisher = new DevnetPublisher(redis, prefix);
    const builder = new BsvTransactionBuilder({ keys });
    const txs = Array.from({ length: 20 }, (_, i) => builder.build({ kind: 'independent', data: new Uint8Array([i]) }));
    for (const tx of txs) expect(await publisher.submit(tx)).toEqual({ status: 'accepted' });

    const reader = new DevnetReader(redis, prefix);
    await eventually(async () => (await reader.tipHeight()) >= 4, 15_000);
    await Promise.all(running.splice(0).map((r) => r.close()));

    const tip = await reader.tipHeight();
    let prev = '0'.repeat(64);
    const seen = new Set<string>();
    for (let h = 0; h <= tip; h++) {
      const b = (await reader.blockByHeight(h))!;
      expect(b.header.prevHash).toBe(prev);
      expect(b.header.merkleRoot).toBe(merkleRoot(b.txIds));
      for (const id of b.txIds) {
        expect(seen.has(id)).toBe(false);
        seen.add(id);
      }
      prev = b.hash;
    }
    for (const tx of txs) expect(seen.has(tx.txId)).toBe(true);

    // Every tick produced exactly one block: the completed jobs' heights are 1..tip, each once
    // (the first tick also made the genesis block).
    const queue = new Queue(QUEUES.chainBlocks, { connection: redis2, prefix: bullPrefix(prefix) });
    try {
      const completed = await queue.getCompleted(0, 1000);
      const heights = completed
        .map((j) => chainBlockResult.parse(j.returnvalue))
        .map((r) => (r.status === 'produced' ? r.height : -1));
      expect([...heights].sort((a, b) => a - b)).toEqual(Array.from({ length: tip }, (_, i) => i + 1));
      expect(await queue.getJobSchedulersCount()).toBe(1);
      expect((await queue.getJobScheduler(CHAIN_BLOCK_SCHEDULER_ID))?.every).toBe(300);
    } finally {
      await queue.close();
    }
  });
});
