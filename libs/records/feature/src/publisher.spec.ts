import type { ConnectionOptions } from 'bullmq';
import { RecordStore } from '@proofline/records-data-access';
import { InMemoryChain } from '@proofline/records-testing';
import type { ChainPublisher, SubmitResult } from '@proofline/chain-domain';
import { ManualClock, loadConfig } from '@proofline/shared-config';
import { bullPrefix } from '@proofline/shared-jobs';
import { createLogger } from '@proofline/shared-logger';
import { bullConnection } from '@proofline/shared-redis';
import { eventually, testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { BullPublishQueue, startRecordsPublisher } from './publisher';
import type { RunningPublisher } from './publisher';
import { RecordsService } from './service';
import type { PublishQueue } from './service';

const logger = createLogger({ level: 'silent', name: 'test' });
const tenant = { tenant: 't1' };

describe('records publisher (real Redis, real BullMQ)', () => {
  const prefix = uniquePrefix('pub');
  const { redis, cleanup } = testRedis(prefix);
  const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const connection = bullConnection(config.redisUrl) as ConnectionOptions;
  const store = new RecordStore(redis, prefix);
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const queue = new BullPublishQueue(connection, bullPrefix(prefix));
  const running: RunningPublisher[] = [];
  const start = (chain: ChainPublisher, extra: Partial<Parameters<typeof startRecordsPublisher>[0]> = {}) => {
    const p = startRecordsPublisher({ connection, bullPrefix: bullPrefix(prefix), store, chain, clock, logger, concurrency: 2, sweepEveryMs: 0, ...extra });
    running.push(p);
    return p;
  };
  const service = (chain: InMemoryChain, q: PublishQueue = queue) => new RecordsService({ config, clock, store, builder: chain, reader: chain, queue: q, logger });

  afterEach(async () => {
    for (const p of running.splice(0)) await p.close(true);
    await queue.queue.obliterate({ force: true });
  });
  afterAll(async () => {
    await queue.close();
    await cleanup();
  });

  it('a job held by a worker that dies is re-run by another and the record is published exactly once', async () => {
    const chain = new InMemoryChain();
    let hungCalls = 0;
    let release: (r: SubmitResult) => void = () => undefined;
    const hung: ChainPublisher = {
      submit: (tx) => {
        hungCalls++;
        return new Promise<SubmitResult>((resolve) => {
          release = (r) => resolve(r);
        }).then(() => chain.submit(tx));
      },
    };
    const first = start(hung, { lockDuration: 1000, stalledInterval: 500 });
    const { txId } = await service(chain).writeIndependent(tenant, { body: Buffer.from('x'), encode: 'SHA256' });
    await eventually(async () => hungCalls === 1, 5000);
    // the worker dies with the job in hand: its lock is no longer renewed
    await first.close(true);
    running.splice(running.indexOf(first), 1);
    start(chain, { lockDuration: 1000, stalledInterval: 500 });
    await eventually(async () => (await store.state(txId)) === 'published', 15_000);
    // the dead worker's submit finally returns: idempotent by txId
    release({ status: 'accepted' });
    await new Promise((r) => setTimeout(r, 50));
    const block = chain.mine();
    expect(block.txIds.filter((t) => t === txId)).toHaveLength(1);
    expect(await store.outboxSize()).toBe(0);
    expect(await store.state(txId)).toBe('published');
  });

  it('a write whose enqueue was lost is published by the outbox sweeper', async () => {
    const chain = new InMemoryChain();
    const lost: PublishQueue = { enqueue: () => Promise.reject(new Error('api died')) };
    const { txId } = await service(chain, lost).createLinked(tenant, { body: Buffer.from('x'), encode: undefined });
    expect(await queue.queue.getJob(txId)).toBeUndefined();
    const publisher = start(chain);
    expect(await publisher.sweep()).toBe(0); // too young: the API may still be enqueueing it
    clock.advance(6000);
    expect(await publisher.sweep()).toBe(1);
    await eventually(async () => (await store.state(txId)) === 'published', 10_000);
    expect(await store.outboxSize()).toBe(0);
    expect(await publisher.sweep()).toBe(0);
    // sweeping twice or enqueueing again never publishes twice
    await queue.enqueue(txId);
    await new Promise((r) => setTimeout(r, 200));
    expect(chain.accepted.get(txId)).toBe(1);
  });

  it('an update waits for the record it spends; a permanent rejection is recorded and not retried', async () => {
    const chain = new InMemoryChain();
    const svc = service(chain);
    const created = await svc.createLinked(tenant, { body: Buffer.from('a'), encode: undefined });
    const updated = await svc.updateLinked(tenant, created.txId, { body: Buffer.from('b'), encode: undefined, updateToken: created.updateToken });
    start(chain, { concurrency: 4 });
    await eventually(async () => (await store.state(updated.txId)) === 'published', 10_000);
    expect(chain.mine().txIds.slice(1)).toEqual([created.txId, updated.txId]);

    let calls = 0;
    const rejecting: ChainPublisher = {
      submit: async () => {
        calls++;
        return { status: 'rejected', code: 'INVALID_TX', detail: 'bad script' };
      },
    };
    for (const p of running.splice(0)) await p.close();
    start(rejecting);
    const doomed = await svc.writeIndependent(tenant, { body: Buffer.from('c'), encode: undefined });
    await eventually(async () => (await store.state(doomed.txId)) === 'failed', 10_000);
    expect((await store.meta(doomed.txId))?.failure).toMatch(/^INVALID_TX/);
    expect(await svc.status('independent', doomed.txId)).toEqual({ confirmation: null, publication: 'failed' });
    expect(await store.outboxSize()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(calls).toBe(1);
  });
});
