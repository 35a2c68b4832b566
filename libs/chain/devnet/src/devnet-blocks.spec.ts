import { Redis } from 'ioredis';
import { deriveChainKeys } from '@proofline/chain-bsv';
import type { BlockEvent, BlockReader } from '@proofline/chain-domain';
import { eventually, testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { createDevnetChain, devnetKeys } from './index';

describe('the devnet as a BlockReader (the port GraphQL reads blocks through)', () => {
  const prefix = uniquePrefix('blocksport');
  const { redis, cleanup } = testRedis(prefix);
  const subscriber = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  const chain = createDevnetChain({ redis, subscriber, prefix, keys: deriveChainKeys() });

  afterAll(async () => {
    await chain.close();
    await subscriber.quit();
    await cleanup();
  });

  it('reads the tip, blocks by hash and height, a page of txIds, and hears every committed block', async () => {
    const blocks: BlockReader | null = chain.blocks;
    if (!blocks) throw new Error('a subscriber was given: the block reader must exist');
    expect(await blocks.tip()).toBeNull();
    expect(await blocks.blockByHeight(0)).toBeNull();
    expect(await blocks.blockTxIds('0'.repeat(64), 0, 10)).toBeNull();

    const events = blocks.blockEvents();
    const other = blocks.blockEvents();
    // the first iterator's SUBSCRIBE must be in place before the block is committed
    const channel = devnetKeys(prefix).blockEvents;
    await eventually(async () => Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1]) === 1, 5000);
    for (let i = 0; i < 3; i++) {
      const tx = chain.builder.build({ kind: 'independent', data: new Uint8Array([i]) });
      expect(await chain.publisher.submit(tx)).toEqual({ status: 'accepted' });
    }
    const produced = await chain.producer.produceBlock(new Date());
    if (produced.status !== 'produced') throw new Error(produced.reason);

    const heard: BlockEvent[] = [];
    for (let i = 0; i < 2; i++) heard.push((await events.next()).value as BlockEvent);
    expect(heard.map((e) => [e.height, e.txCount])).toEqual([
      [0, 1],
      [1, 4],
    ]);
    expect(heard[1]?.hash).toBe(produced.hash);
    expect(((await other.next()).value as BlockEvent).height).toBe(0);

    const tip = await blocks.tip();
    expect(tip).toMatchObject({ hash: produced.hash, height: 1 });
    const byHash = await blocks.blockByHash(produced.hash);
    const byHeight = await blocks.blockByHeight(1);
    expect(byHash).toMatchObject({ hash: produced.hash, height: 1, txCount: 4 });
    expect(byHeight?.hash).toBe(produced.hash);
    expect(byHash?.headerHex).toHaveLength(160);
    const all = await blocks.blockTxIds(produced.hash, 0, 10);
    expect(all).toHaveLength(4);
    expect(await blocks.blockTxIds(produced.hash, 1, 3)).toEqual(all?.slice(1, 3));

    // a returned iterator is done and hears nothing more
    expect(await events.return?.()).toEqual({ value: undefined, done: true });
    expect(await events.next()).toEqual({ value: undefined, done: true });
    await other.return?.();
  });
});
