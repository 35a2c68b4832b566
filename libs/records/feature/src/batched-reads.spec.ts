import { FundingPool } from '@proofline/chain-wallet';
import { InMemoryChain, fundPool } from '@proofline/records-testing';
import { ManualClock, loadConfig } from '@proofline/shared-config';
import { testRedis, testRedisIsCluster, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { createRecords } from './records';
import type { ChainReader } from '@proofline/chain-domain';
import type { RecordReads } from './record-reads';

// The batched reads and the chain page that the GraphQL facade builds on.
describe('records: batched reads and chain pages', () => {
  const prefix = uniquePrefix('recbatch');
  const { redis, cleanup } = testRedis(prefix);
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const chain = new InMemoryChain();
  const funding = { pool: new FundingPool(redis, { prefix, address: 'test' }), feeRate: () => 1 };
  const make = (env: Record<string, string> = {}, reader: ChainReader = chain) =>
    createRecords({
      config: loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent', ...env }),
      clock,
      redis,
      prefix,
      builder: chain,
      funding,
      reader,
      queue: { enqueue: async () => undefined },
    });
  const { writes: service, reads } = make();
  const caller = { tenant: 't1' };
  const txIds: string[] = [];
  let independent = '';

  beforeAll(async () => {
    await fundPool(funding.pool, 500, 1000);
    const created = await service.createLinked(caller, { body: Buffer.from('v0'), encode: 'Base64' });
    txIds.push(created.txId);
    for (let i = 1; i < 7; i++) {
      const prev = txIds[txIds.length - 1] ?? '';
      txIds.push(
        (
          await service.updateLinked(caller, prev, {
            body: Buffer.from(`v${i}`),
            encode: undefined,
            updateToken: undefined,
          })
        ).txId,
      );
    }
    independent = (await service.writeIndependent(caller, { body: Buffer.from('alone'), encode: undefined })).txId;
  });
  afterAll(() => cleanup());

  it('records() and contents() answer many txIds in order, null where unknown', async () => {
    const unknown = 'f'.repeat(64);
    const metas = await reads.metaMany([txIds[3] ?? '', unknown, independent, txIds[0] ?? '']);
    expect(metas.map((m) => m && [m.txId, m.family, m.kind, m.position])).toEqual([
      [txIds[3], 'linked', 'update', 3],
      null,
      [independent, 'independent', 'independent', 0],
      [txIds[0], 'linked', 'create', 0],
    ]);
    expect(metas[0]?.byteLength).toBe(2);
    const bytes = await reads.contentMany([txIds[0] ?? '', unknown, independent]);
    expect(bytes.map((b) => b && b.toString())).toEqual([Buffer.from('v0').toString('base64'), null, 'alone']);
  });

  it('metaMany() (one script call) answers exactly what meta() answers, record by record', async () => {
    const ids = [...txIds, independent];
    const many = await reads.metaMany(ids);
    const one = await Promise.all(ids.map((id) => reads.meta(id === independent ? 'independent' : 'linked', id)));
    expect(many).toEqual(one);
    expect(many.every((m) => m !== null && m.byteLength > 0)).toBe(true);
  });

  it('find() applies the REST read rules', async () => {
    await expect(reads.meta('linked', txIds[2])).resolves.toMatchObject({
      txId: txIds[2],
      prevTxId: txIds[1],
      nextTxId: txIds[3],
    });
    await expect(reads.meta('linked', 'nope')).rejects.toMatchObject({
      errorCode: 'TX_ID_PARAM_INVALID',
      httpStatus: 400,
    });
    await expect(reads.meta('linked', 'a'.repeat(64))).rejects.toMatchObject({
      errorCode: 'TX_NOT_FOUND',
      httpStatus: 404,
    });
    await expect(reads.meta('linked', independent)).rejects.toMatchObject({
      errorCode: 'TX_INCORRECT_EVENT_TRANSACTION_TYPE',
    });
    await expect(reads.meta('independent', txIds[0])).rejects.toMatchObject({
      errorCode: 'TX_INCORRECT_EVENT_TRANSACTION_TYPE',
    });
    await expect(make({ FEATURES: 'verify' }).reads.meta('linked', txIds[0])).rejects.toMatchObject({
      errorCode: 'FEATURE_NOT_ENABLED',
      httpStatus: 403,
    });
  });

  it('chainPage() pages forward and backward with exclusive bounds', async () => {
    const chainId = txIds[0] ?? '';
    const page = (p: Parameters<RecordReads['chainPage']>[1]) => reads.chainPage(chainId, p);
    expect(await page({ first: 3 })).toEqual({ total: 7, start: 0, txIds: txIds.slice(0, 3) });
    expect(await page({ first: 3, after: 2 })).toEqual({ total: 7, start: 3, txIds: txIds.slice(3, 6) });
    expect(await page({ first: 10, after: 5 })).toEqual({ total: 7, start: 6, txIds: txIds.slice(6) });
    expect(await page({ first: 3, after: 6 })).toEqual({ total: 7, start: 7, txIds: [] });
    expect(await page({ first: 5, after: 0, before: 3 })).toEqual({ total: 7, start: 1, txIds: txIds.slice(1, 3) });
    expect(await page({ first: 2, before: 0 })).toEqual({ total: 7, start: 0, txIds: [] });
    expect(await page({ last: 2 })).toEqual({ total: 7, start: 5, txIds: txIds.slice(5) });
    expect(await page({ last: 100 })).toEqual({ total: 7, start: 0, txIds });
    expect(await page({ last: 2, before: 3 })).toEqual({ total: 7, start: 1, txIds: txIds.slice(1, 3) });
    expect(await page({ last: 5, before: 2 })).toEqual({ total: 7, start: 0, txIds: txIds.slice(0, 2) });
    expect(await page({ last: 5, after: 4 })).toEqual({ total: 7, start: 5, txIds: txIds.slice(5) });
    expect(await page({ last: 5, after: 1, before: 4 })).toEqual({ total: 7, start: 2, txIds: txIds.slice(2, 4) });
    expect(await page({ last: 1, before: 0 })).toEqual({ total: 7, start: 0, txIds: [] });
    expect(await page({ first: 1, after: 100 })).toEqual({ total: 7, start: 101, txIds: [] });
  });

  it('chain pages need the navigate feature', async () => {
    const off = make({ FEATURES: 'linked,verify,unencoded' }).reads;
    expect(() => off.requireNavigation()).toThrow(expect.objectContaining({ errorCode: 'FEATURE_NOT_ENABLED' }));
    await expect(off.chainPage(txIds[0] ?? '', { first: 1 })).rejects.toMatchObject({
      errorCode: 'FEATURE_NOT_ENABLED',
      httpStatus: 403,
    });
  });

  it('a record proven in a block above the stored tip (the tip lags proofs that ARC callbacks bring) reads confirmedBlocks 1, never 0 or less', async () => {
    const lagging = new InMemoryChain();
    const { reads: lagged } = make(
      {},
      {
        tipHeight: async () => (await lagging.tipHeight()) - 3,
        inclusions: (ids) => lagging.inclusions(ids),
      },
    );
    const txId = 'c'.repeat(64);
    await lagging.submit({ txId, rawTx: Buffer.from('{}') });
    lagging.mine();
    lagging.mine();
    const block = lagging.mine();
    expect(block.txIds).toEqual([expect.any(String)]);
    const [confirmation] = await lagged.confirmationMany([txId]);
    expect(confirmation).toMatchObject({ confirmedBlocks: 1 });
    // Once the tip catches up the depth counts from it again.
    const [direct] = await make({}, lagging).reads.confirmationMany([txId]);
    expect(direct).toMatchObject({ confirmedBlocks: 3 });
  });
});

// With partitions, a batched read takes one command per partition on a cluster (a command's keys
// share a slot) and one for the whole batch on one Redis (keys of any slots go together).
describe('records: batched reads over partitions', () => {
  const prefix = uniquePrefix('recparts');
  const { redis, cleanup } = testRedis(prefix);
  const chain = new InMemoryChain();
  const partitions = 4;
  const funding = { pool: new FundingPool(redis, { prefix, address: 'test', partitions }), feeRate: () => 1 };
  const { writes, store } = createRecords({
    config: loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' }),
    clock: new ManualClock('2026-01-01T00:00:00Z'),
    redis,
    prefix,
    builder: chain,
    funding,
    reader: chain,
    queue: { enqueue: async () => undefined },
  });
  const ids: string[] = [];

  beforeAll(async () => {
    await fundPool(funding.pool, 40, 1000);
    // Roots go round robin: eight of them fill every partition.
    for (let i = 0; i < 8; i++)
      ids.push(
        (await writes.writeIndependent({ tenant: `t${i}` }, { body: Buffer.from(`b${i}`), encode: undefined })).txId,
      );
  });
  afterAll(() => cleanup());

  it('metaMany, tenants, bytes and raw transactions answer in order in one command per partition, or one on one Redis', async () => {
    const units = await store.partitionsOf(ids);
    expect(new Set(units).size).toBe(partitions);
    const unknown = 'e'.repeat(64);
    const asked = [...ids.slice(0, 5), unknown, ...ids.slice(5)];
    const commands = redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const calls = { metaMany: 0, bytesManyBuffer: 0, mgetBuffer: 0 };
    const spies = (Object.keys(calls) as (keyof typeof calls)[]).map((name) => {
      const real = commands[name]!.bind(redis);
      return jest.spyOn(commands, name).mockImplementation((...args: unknown[]) => {
        calls[name]++;
        return real(...args);
      });
    });
    try {
      const metas = await store.metaMany(asked);
      const tenants = await store.tenantsOf(asked);
      const bytes = await store.bytesMany(asked);
      const raw = await store.rawTxMany(asked);
      expect(metas.map((m) => m?.txId ?? null)).toEqual(asked.map((t) => (t === unknown ? null : t)));
      expect(tenants).toEqual(asked.map((t) => (t === unknown ? null : `t${ids.indexOf(t)}`)));
      expect(bytes.map((b) => b?.toString() ?? null)).toEqual(
        asked.map((t) => (t === unknown ? null : `b${ids.indexOf(t)}`)),
      );
      for (const [i, txId] of asked.entries())
        expect(raw[i] === null ? null : Buffer.from(raw[i]!).toString('hex')).toEqual(
          txId === unknown ? null : Buffer.from((await store.publication(txId))!.rawTx).toString('hex'),
        );
      const perRead = testRedisIsCluster() ? partitions : 1;
      expect(calls).toEqual({ metaMany: 2 * perRead, bytesManyBuffer: perRead, mgetBuffer: perRead });
    } finally {
      spies.forEach((s) => s.mockRestore());
    }
  });
});
