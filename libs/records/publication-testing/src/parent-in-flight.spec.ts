import { Transaction } from '@bsv/sdk';
import type { ArcChain } from '@proofline/chain-arc';
import { isExtendedFormat } from '@proofline/chain-domain';
import { startArcDevnet, startArcProxy } from '@proofline/devnet-testing';
import type { ArcDevnet, ArcProxy } from '@proofline/devnet-testing';
import type { RecordWrites } from '@proofline/records-feature';
import { PARENT_WAITS_MAX } from '@proofline/records-publication';
import type { Publication } from '@proofline/records-publication';
import { loadConfig } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix } from '@proofline/shared-redis';
import { eventually, testRedisClient, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { composePublicationSide } from './publication-side';
import type { PublicationSide } from './publication-side';

// ARC answering 460 ("no parent found") to a record transaction, as an ARC that looks parents up
// does while a parent is still in flight: devnet-testing's ARC proxy in front of the devnet node
// answers 460 for the transactions a spec names, the number of times it names.

jest.setTimeout(60_000);

describe('ARC 460 while a parent of ours is in flight (real HTTP: publisher → 460 proxy → devnet node)', () => {
  const prefix = uniquePrefix('p460');
  const logger = createLogger({ level: 'silent', name: 'test' });
  const redis = testRedisClient({ maxRetriesPerRequest: null });
  const tenant = { tenant: 't460' };
  let dev: ArcDevnet;
  let proxy: ArcProxy;
  let side: PublicationSide;
  let chain: ArcChain;
  let publication: Publication;
  let writes: RecordWrites;
  // Each spec names, before its write, the record whose first submission ARC answers 460.
  let refuseNext: ((txId: string) => void | Promise<void>) | null = null;

  beforeAll(async () => {
    dev = await startArcDevnet({ redis, prefix });
    proxy = await startArcProxy({ target: dev.node.url });
    const config = loadConfig({
      ...dev.env,
      ARC_URL: proxy.url,
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      LOG_LEVEL: 'silent',
    });
    side = composePublicationSide({ prefix, config, pool: dev.pool, logger });
    ({ chain, publication } = side);
    // A queue that names the record to refuse before its job can submit it.
    const queue = {
      enqueue: async (txId: string) => {
        await refuseNext?.(txId);
        await publication.queue.enqueue(txId);
      },
    };
    writes = side.records(queue).writes;
    await dev.fund(20, 2000);
    publication.startPublisher({ concurrency: 4, sweepEveryMs: 200, sweepAfterMs: 300 });
    await publication.startConfirmations();
  });
  afterAll(async () => {
    await side.close();
    await proxy.close();
    await dev.close();
    await deleteByPrefix(redis, prefix);
    await redis.quit();
  });

  const proven = (txId: string) =>
    eventually(async () => {
      await dev.node.mineBlock();
      return (await chain.reader.inclusions([txId]))[0]?.proof != null;
    }, 30_000);

  it('an update answered 460 while its create is published but not mined is sent again after it: published and confirmed', async () => {
    const created = await writes.createLinked(tenant, { body: Buffer.from('v1'), encode: undefined });
    refuseNext = (txId) => proxy.refuse(txId, 2);
    const updated = await writes.updateLinked(tenant, created.txId, {
      body: Buffer.from('v2'),
      encode: undefined,
      updateToken: created.updateToken,
    });
    refuseNext = null;
    await eventually(async () => (await publication.store.state(updated.txId)) === 'published', 20_000);
    await proven(created.txId);
    await proven(updated.txId);
    expect(await publication.store.state(updated.txId)).toBe('published');
    const sent = proxy.submissions.filter((s) => s.txId === updated.txId);
    // Twice refused (460), then accepted: always the same EF bytes, the ones stored.
    expect(sent.map((s) => s.answered)).toEqual([460, 460, 200]);
    expect(new Set(sent.map((s) => s.hex)).size).toBe(1);
    const stored = (await publication.store.publication(updated.txId))!.broadcastTx;
    expect(isExtendedFormat(stored)).toBe(true);
    expect(sent[0]!.hex).toBe(Buffer.from(stored).toString('hex'));
    expect(Transaction.fromHexEF(sent[0]!.hex).id('hex')).toBe(updated.txId);
    expect(await redis.hget((await publication.store.keysFor(updated.txId))!.record(updated.txId), 'parentWaits')).toBe(
      '2',
    );
  });

  it('waits for a parent in flight are bounded: past PARENT_WAITS_MAX the 460 is the refusal, logged and counted on the record', async () => {
    const created = await writes.createLinked(tenant, { body: Buffer.from('b1'), encode: undefined });
    refuseNext = async (txId) => {
      proxy.refuse(txId, 5);
      // As if it had waited all but once already.
      await redis.hset(
        (await publication.store.keysFor(txId))!.record(txId),
        'parentWaits',
        String(PARENT_WAITS_MAX - 1),
      );
    };
    const updated = await writes.updateLinked(tenant, created.txId, {
      body: Buffer.from('b2'),
      encode: undefined,
      updateToken: created.updateToken,
    });
    refuseNext = null;
    await eventually(async () => (await publication.store.state(updated.txId)) === 'failed', 20_000);
    expect((await publication.store.meta(updated.txId))?.failure).toBe(
      `INVALID_TX: ARC 460: parents of ours not found by ARC after ${PARENT_WAITS_MAX} waits`,
    );
    // The publisher sent it twice; a refusal that does not prove the transaction can never be mined
    // leaves it watched, so the confirmation pass may send the same bytes again (refused here too).
    const answered = proxy.submissions.filter((s) => s.txId === updated.txId).map((s) => s.answered);
    expect(answered.slice(0, 2)).toEqual([460, 460]);
    expect(answered.every((a) => a === 460)).toBe(true);
    expect(await publication.store.state(created.txId)).toBe('published');
  });

  it("a create answered 460 whose parents are settled or not ours (a funding split, a proven record's change): the 460 is its refusal", async () => {
    // Every record published so far mined and proven: whatever funds the create is settled.
    await eventually(async () => {
      await dev.node.mineBlock();
      return (await chain.store.watchedCount()) === 0;
    }, 30_000);
    // Refused every time: the record stays watched after it fails (a refusal is final only when
    // the chain agrees), and the confirmation pass's re-sends are refused too.
    refuseNext = (txId) => proxy.refuse(txId, 1000);
    const created = await writes.createLinked(tenant, { body: Buffer.from('foreign'), encode: undefined });
    refuseNext = null;
    await eventually(async () => (await publication.store.state(created.txId)) === 'failed', 20_000);
    const meta = await publication.store.meta(created.txId);
    expect(meta?.failure).toMatch(/^INVALID_TX: ARC 460/);
    const answered = proxy.submissions.filter((s) => s.txId === created.txId).map((s) => s.answered);
    expect(answered[0]).toBe(460);
    expect(answered.every((a) => a === 460)).toBe(true);
  });
});
