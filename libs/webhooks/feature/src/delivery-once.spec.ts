import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChainReader } from '@proofline/chain-domain';
import type { RecordMeta } from '@proofline/records-domain';
import { systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix } from '@proofline/shared-redis';
import { eventually, testBullRedis, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { Queue } from 'bullmq';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { deliverWebhook, startWebhookDelivery } from './delivery';
import type { RunningWebhookDelivery } from './delivery';
import { messageIdOf, startWebhookWatcher } from './watcher';
import type { RunningWebhookWatcher } from './watcher';
import { createWebhooks } from './webhooks';

interface Received {
  readonly id: string;
  readonly txId: string;
  readonly answered: number;
  readonly at: number;
}

/** A receiver that answers 500 to the first request of each event, then 200 (after `delayMs`). */
async function flakyReceiver(delayMs = 0): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const seen = new Set<string>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const answered = seen.has(id) ? 200 : 500;
      seen.add(id);
      const txId = (JSON.parse(body) as { data: { txId: string } }).data.txId;
      setTimeout(() => {
        received.push({ id, txId, answered, at: Date.now() });
        res.writeHead(answered).end();
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const TENANT = 'tenant-once';
const txIdOf = (i: number) => i.toString(16).padStart(64, '0');
const meta = (txId: string): RecordMeta =>
  ({
    txId,
    family: 'independent',
    kind: 'create',
    tenant: TENANT,
    chainId: txId,
    position: 0,
    prevTxId: null,
    nextTxId: null,
    contentType: 'application/octet-stream',
    encoders: [],
    acceptedAt: new Date().toISOString(),
    state: 'published',
    failure: null,
    linkVout: null,
    linkSatoshis: null,
    byteLength: 1,
  }) as unknown as RecordMeta;

/** Every txId is mined with a proof (the watcher's only question to the chain). */
const minedReader = {
  tipHeight: async () => 10,
  inclusions: async (txIds: readonly string[]) =>
    txIds.map(() => ({
      blockHash: 'ab'.repeat(32),
      blockHeight: 10,
      blockTime: new Date(),
      index: 0,
      proof: {
        index: 0,
        txOrId: 'x',
        target: 'y',
        nodes: [],
        targetType: 'header',
        proofType: 'branch',
        composite: false,
      },
    })),
} as unknown as ChainReader;

describe('webhooks: exactly one successful delivery per event and endpoint', () => {
  const prefix = uniquePrefix('whonce');
  const logger = createLogger({ level: 'silent', name: 'spec' });
  const redis = testRedisClient({ maxRetriesPerRequest: null });
  // Two worker processes' worth: each with its own BullMQ connection, watcher and delivery worker.
  const first = testBullRedis();
  const bulls = [first, testBullRedis()];
  const webhooks = createWebhooks({
    config: { webhooks: { allowPrivate: true, secretKey: undefined, limit: 10 } },
    redis,
    prefix,
    clock: systemClock,
  });
  const watchers: RunningWebhookWatcher[] = [];
  const deliveries: RunningWebhookDelivery[] = [];

  beforeAll(async () => {
    for (const connection of bulls) {
      watchers.push(
        await startWebhookWatcher({
          connection,
          redis,
          prefix,
          webhooks: webhooks.store,
          records: { metaMany: async (txIds) => txIds.map(meta) },
          reader: minedReader,
          clock: systemClock,
          everyMs: 100,
          retry: { attempts: 5, baseDelayMs: 200 },
          logger,
        }),
      );
      deliveries.push(
        startWebhookDelivery({
          connection,
          prefix,
          store: webhooks.store,
          box: webhooks.box,
          clock: systemClock,
          allowPrivate: true,
          concurrency: 8,
          logger,
        }),
      );
    }
  });
  afterAll(async () => {
    for (const d of deliveries) await d.close();
    for (const w of watchers) await w.close();
    await deleteByPrefix(redis, prefix);
    for (const b of bulls) await b.quit();
    await redis.quit();
  });

  it('a job BullMQ runs again after its 2xx (stalled, completion lost) sends nothing; concurrent runs send once', async () => {
    const receiver = await flakyReceiver();
    const queue = new Queue(QUEUES.webhooksDeliver, {
      connection: first,
      prefix: bullPrefix(prefix, QUEUES.webhooksDeliver),
    });
    try {
      const hook = await webhooks.admin.create(TENANT, { url: receiver.url, events: ['record.confirmed'] });
      const deps = { store: webhooks.store, box: webhooks.box, clock: systemClock, allowPrivate: true };
      const jobOf = async (txId: string) => {
        const messageId = messageIdOf(`rerun-${txId}`);
        const body = JSON.stringify({ type: 'record.confirmed', data: { txId } });
        // A real job, read back as a worker would get it (no worker consumes `rerun`: the test runs it).
        const added = await queue.add(
          'rerun',
          { webhookId: hook.id, messageId, event: 'record.confirmed', txId, body },
          { delay: 3_600_000 },
        );
        return (await queue.getJob(added.id ?? ''))!;
      };
      const sequential = await jobOf(txIdOf(101));
      await expect(deliverWebhook(deps, sequential)).rejects.toThrow('receiver answered 500');
      await expect(deliverWebhook(deps, sequential)).resolves.toBe('delivered');
      await expect(deliverWebhook(deps, sequential)).resolves.toBe('already-delivered');
      await expect(deliverWebhook(deps, sequential)).resolves.toBe('already-delivered');

      const concurrent = await jobOf(txIdOf(102));
      await expect(deliverWebhook(deps, concurrent)).rejects.toThrow('receiver answered 500');
      const runs = await Promise.allSettled([1, 2, 3].map(() => deliverWebhook(deps, concurrent)));
      expect(runs.filter((r) => r.status === 'fulfilled' && r.value === 'delivered')).toHaveLength(1);
      expect(
        runs
          .filter((r) => r.status === 'rejected')
          .every((r) => (r as PromiseRejectedResult).reason.name === 'DeliveryBusyError'),
      ).toBe(true);
      await expect(deliverWebhook(deps, concurrent)).resolves.toBe('already-delivered');

      for (const txId of [txIdOf(101), txIdOf(102)])
        expect(receiver.received.filter((r) => r.txId === txId).map((r) => r.answered)).toEqual([500, 200]);
      // the deliveries log has the two real attempts only
      const log = (await webhooks.store.deliveries(hook.id)).filter((a) => a.txId === txIdOf(101));
      expect(log.map((a) => a.delivered)).toEqual([true, false]);
    } finally {
      await queue.close();
      await receiver.close();
    }
  });

  it('a receiver that fails the first attempt: one success per event, retried under the same webhook-id', async () => {
    const receiver = await flakyReceiver(20);
    try {
      await webhooks.admin.create(TENANT, { url: receiver.url, events: ['record.confirmed'] });
      const txIds = Array.from({ length: 20 }, (_, i) => txIdOf(i + 1));
      await webhooks.store.watch(txIds, new Date());
      // The publisher watches a record again on every submit (a retried publication, a rebroadcast):
      // keep re-watching while the retries run.
      const rewatch = setInterval(() => void webhooks.store.watch(txIds, new Date()), 50);
      try {
        await eventually(
          async () => txIds.every((t) => receiver.received.some((r) => r.txId === t && r.answered === 200)),
          20_000,
        );
        await new Promise((r) => setTimeout(r, 2000)); // any duplicate would arrive by now
      } finally {
        clearInterval(rewatch);
      }
      for (const txId of txIds) {
        const mine = receiver.received.filter((r) => r.txId === txId);
        expect(mine.map((r) => r.answered)).toEqual([500, 200]);
        expect(new Set(mine.map((r) => r.id)).size).toBe(1);
      }
    } finally {
      await receiver.close();
    }
  });
});
