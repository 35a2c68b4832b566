import { Redis } from 'ioredis';
import { BsvTransactionBuilder, deriveChainKeys } from '@proofline/chain-bsv';
import { eventually, testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { DevnetBlockProducer, DevnetPublisher, DevnetReader, devnetKeys } from './index';
import type { BlockEvent } from './index';

describe('block events', () => {
  const prefix = uniquePrefix('blockev');
  const { redis, cleanup } = testRedis(prefix);
  const subscriber = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  const keys = deriveChainKeys();

  afterAll(async () => {
    await subscriber.quit();
    await cleanup();
  });

  it('the channel is built from the prefix, apart from every stored key', () => {
    const k = devnetKeys('p1');
    expect(k.blockEvents).toBe('p1:chain:events:blocks');
    expect(devnetKeys('p2').blockEvents).not.toBe(k.blockEvents);
    const stored = Object.entries(k)
      .filter(([name]) => name !== 'blockEvents')
      .map(([, v]) => v);
    expect(stored).not.toContain(k.blockEvents);
  });

  it('publishes one event per committed block (genesis included), after the block is readable', async () => {
    const channel = devnetKeys(prefix).blockEvents;
    const reader = new DevnetReader(redis, prefix);
    const events: BlockEvent[] = [];
    const readable: boolean[] = [];
    subscriber.on('message', (ch: string, message: string) => {
      if (ch !== channel) return;
      const event = JSON.parse(message) as BlockEvent;
      events.push(event);
      // the block the event names must already be committed
      void reader.blockByHash(event.hash).then((b) => readable.push(b !== null && b.height === event.height));
    });
    await subscriber.subscribe(channel);

    const producer = new DevnetBlockProducer(redis, prefix, { keys });
    const tx = new BsvTransactionBuilder({ keys }).build({ kind: 'independent', data: new Uint8Array([1, 2, 3]) });
    expect(await new DevnetPublisher(redis, prefix).submit(tx)).toEqual({ status: 'accepted' });
    const first = await producer.produceBlock(new Date());
    const second = await producer.produceBlock(new Date());
    expect(first).toMatchObject({ status: 'produced', height: 1, txCount: 2 });
    expect(second).toMatchObject({ status: 'produced', height: 2, txCount: 1 });

    await eventually(async () => readable.length === 3, 5000);
    expect(events.map((e) => [e.height, e.txCount])).toEqual([
      [0, 1],
      [1, 2],
      [2, 1],
    ]);
    expect(events[1]?.hash).toBe(first.status === 'produced' ? first.hash : '');
    expect(readable).toEqual([true, true, true]);
    expect(await reader.tipHeight()).toBe(2);
  });
});
