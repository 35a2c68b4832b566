import { createHash } from 'node:crypto';
import type { ConnectionOptions } from 'bullmq';
import { Transaction } from '@bsv/sdk';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import { DevnetBlockProducer, DevnetPublisher, DevnetReader } from '@proofline/chain-devnet';
import { RecordStore } from '@proofline/records-data-access';
import { BullPublishQueue, RecordsService, startRecordsPublisher } from '@proofline/records-feature';
import type { RunningPublisher } from '@proofline/records-feature';
import { bullPrefix } from '@proofline/shared-jobs';
import { createLogger } from '@proofline/shared-logger';
import { bullConnection, createRedis, deleteByPrefix } from '@proofline/shared-redis';
import { eventually, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { call, seedKey, startApi } from '../testing/harness';
import type { RunningApi } from '../testing/harness';
import { identityRecordsAuth } from './records-http';

const sha = (b: Buffer) => createHash('sha256').update(b).digest();
const sha256d = (b: Buffer) => sha(sha(b));

interface Confirmation {
  confirmedBlocks: number;
  blockHash: string;
  blockTimestamp: string;
  merkleProof: { index: number; txOrId: string; target: string; nodes: string[]; targetType: string; proofType: string; composite: boolean };
}

/** Independent TSC check: fold the nodes from the leaf and compare with the header's Merkle root. */
function verifyIndependently(txId: string, c: Confirmation): void {
  const header = Buffer.from(c.merkleProof.target, 'hex');
  expect(header).toHaveLength(80);
  expect(c.blockHash).toBe(Buffer.from(sha256d(header)).reverse().toString('hex'));
  expect(c.merkleProof).toMatchObject({ txOrId: txId, targetType: 'header', proofType: 'branch', composite: false });
  let running = Buffer.from(txId, 'hex').reverse();
  let index = c.merkleProof.index;
  for (const node of c.merkleProof.nodes) {
    const sibling = node === '*' ? running : Buffer.from(node, 'hex').reverse();
    running = index % 2 === 1 ? sha256d(Buffer.concat([sibling, running])) : sha256d(Buffer.concat([running, sibling]));
    index = Math.floor(index / 2);
  }
  expect(index).toBe(0);
  expect(running.equals(header.subarray(36, 68))).toBe(true);
  expect(new Date(c.blockTimestamp).getTime() / 1000).toBe(header.readUInt32LE(68));
}

describe('records on the embedded devnet (real transactions, blocks and proofs)', () => {
  const prefix = uniquePrefix('recdev');
  const logger = createLogger({ level: 'silent', name: 'test' });
  let api: RunningApi;
  let publisher: RunningPublisher;
  let blocks: NodeJS.Timeout;
  const workerRedis = createRedis(testRedisUrl(), { maxRetriesPerRequest: null });

  beforeAll(async () => {
    api = await startApi({
      prefix,
      env: { BLOCK_INTERVAL_MS: '200' },
      extend: async (base) => {
        const queue = new BullPublishQueue(bullConnection(base.config.redisUrl) as ConnectionOptions, bullPrefix(prefix));
        const service = new RecordsService({
          config: base.config,
          clock: base.clock,
          store: new RecordStore(base.redis, prefix),
          builder: new BsvTransactionBuilder(),
          reader: new DevnetReader(base.redis, prefix),
          queue,
        });
        return { deps: { records: { service, auth: identityRecordsAuth(base.identity) } }, close: () => queue.close() };
      },
    });
    const { config } = api.deps;
    publisher = startRecordsPublisher({
      connection: bullConnection(config.redisUrl) as ConnectionOptions,
      bullPrefix: bullPrefix(prefix),
      store: new RecordStore(workerRedis, prefix),
      chain: new DevnetPublisher(workerRedis, prefix),
      clock: api.deps.clock,
      logger,
      concurrency: 8,
    });
    // the block producer's tick, every BLOCK_INTERVAL_MS
    const producer = new DevnetBlockProducer(workerRedis, prefix);
    let busy = false;
    blocks = setInterval(() => {
      if (busy) return;
      busy = true;
      void producer.produceBlock(new Date()).finally(() => {
        busy = false;
      });
    }, config.blockIntervalMs);
  });
  afterAll(async () => {
    clearInterval(blocks);
    await publisher.close();
    await api.close();
    await deleteByPrefix(workerRedis, prefix);
    await workerRedis.quit();
  });

  it('a linked chain and an independent record confirm within a few blocks with proofs an independent check accepts', async () => {
    const writer = await seedKey(api, { tenant: 'acme', permissions: ['Issuer_Admin'] });
    const octet = (body: string) => ({ key: writer.rawKey, body, contentType: 'application/octet-stream' });
    const created = (await call(api, 'POST', '/api/v1/linkedrecords?encode=SHA256', octet('v1'))).body as { txId: string; updateToken: string };
    const updated = (await call(api, 'POST', `/api/v1/linkedrecords/${created.txId}/update?updateToken=${created.updateToken}`, octet('v2'))).body as {
      txId: string;
    };
    const deleted = (await call(api, 'POST', `/api/v1/linkedrecords/${updated.txId}/delete`, { key: writer.rawKey })).body as { txId: string };
    const independent = (await call(api, 'POST', '/api/v1/records?encode=Base64', octet('alone'))).body as { txId: string };

    // the raw transactions are real: txId = reversed sha256d of the serialization; the update spends the create's link output
    const store = new RecordStore(workerRedis, prefix);
    const rawUpdate = (await store.publication(updated.txId))?.rawTx ?? '';
    expect(Buffer.from(sha256d(Buffer.from(rawUpdate, 'hex'))).reverse().toString('hex')).toBe(updated.txId);
    const tx = Transaction.fromHex(rawUpdate);
    expect(tx.inputs[0]?.sourceTXID).toBe(created.txId);
    expect(tx.inputs[0]?.sourceOutputIndex).toBe(2);

    const statusOf = async (family: string, txId: string) =>
      (await call(api, 'GET', `/api/v1/${family}/${txId}/status`, { key: writer.rawKey })).body as { confirmation: Confirmation | null; publication: string };
    const all: [string, string][] = [
      ['linkedrecords', created.txId],
      ['linkedrecords', updated.txId],
      ['linkedrecords', deleted.txId],
      ['records', independent.txId],
    ];
    await eventually(async () => (await Promise.all(all.map(([f, t]) => statusOf(f, t)))).every((s) => s.confirmation !== null), 20_000, 100);
    for (const [family, txId] of all) {
      const s = await statusOf(family, txId);
      expect(s.publication).toBe('published');
      expect(s.confirmation?.confirmedBlocks).toBeGreaterThanOrEqual(1);
      verifyIndependently(txId, s.confirmation as Confirmation);
    }
    // confirmations grow as blocks are produced
    const first = (await statusOf('records', independent.txId)).confirmation?.confirmedBlocks ?? 0;
    await eventually(async () => ((await statusOf('records', independent.txId)).confirmation?.confirmedBlocks ?? 0) > first, 5000, 100);
  });
});
