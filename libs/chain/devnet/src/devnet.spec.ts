import { LockingScript, Transaction, UnlockingScript } from '@bsv/sdk';
import { Redis } from 'ioredis';
import { blockHash, merkleRoot, parseHeader, verifyTscProof } from '@proofline/chain-domain';
import {
  BsvTransactionBuilder,
  deriveChainKeys,
  faucetTxId,
  parseTransaction,
  tscToMerklePath,
} from '@proofline/chain-bsv';
import { testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { DevnetBlockProducer, DevnetPublisher, DevnetReader, devnetKeys } from './index';

const keys = deriveChainKeys();
const builder = new BsvTransactionBuilder({ keys });
const data = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const T0 = new Date('2026-03-01T12:00:00Z');

function setup() {
  const prefix = uniquePrefix('devnet');
  const { redis, cleanup } = testRedis(prefix);
  return {
    prefix,
    redis,
    cleanup,
    publisher: new DevnetPublisher(redis, prefix),
    producer: new DevnetBlockProducer(redis, prefix, { keys }),
    reader: new DevnetReader(redis, prefix),
    k: devnetKeys(prefix),
  };
}

describe('DevnetPublisher', () => {
  const env = setup();
  afterAll(() => env.cleanup());

  it('accepts a transaction once and is idempotent by txId', async () => {
    const tx = builder.build({ kind: 'independent', data: data('a'), contentType: 'text/plain' });
    await expect(env.publisher.submit(tx)).resolves.toEqual({ status: 'accepted' });
    await expect(env.publisher.submit(tx)).resolves.toEqual({ status: 'already-known' });
    expect(await env.redis.zrange(env.k.mempool, 0, -1)).toEqual([tx.txId]);
    expect(await env.redis.hget(env.k.raw, tx.txId)).toBe(Buffer.from(tx.rawTx).toString('hex'));
  });

  it('rejects an unparseable transaction and a txId that does not match', async () => {
    const tx = builder.build({ kind: 'independent', data: data('b') });
    await expect(env.publisher.submit({ txId: tx.txId, rawHex: 'abcd' })).resolves.toMatchObject({
      status: 'rejected',
      code: 'INVALID_TX',
    });
    await expect(env.publisher.submit({ txId: 'f'.repeat(64), rawTx: tx.rawTx })).resolves.toMatchObject({
      status: 'rejected',
      code: 'INVALID_TX',
    });
    expect(await env.redis.hexists(env.k.raw, tx.txId)).toBe(0);
  });

  it('accepts a spend of a link output once: a second spend is a DOUBLE_SPEND, even concurrently', async () => {
    const create = builder.build({ kind: 'create', data: data('v1'), contentType: 'text/plain' });
    await env.publisher.submit(create);
    const updates = Array.from({ length: 8 }, (_, i) =>
      builder.build({ kind: 'update', data: data(`v2-${i}`), spends: create.linkOutput! }),
    );
    const results = await Promise.all(updates.map((u) => env.publisher.submit(u)));
    const accepted = results.filter((r) => r.status === 'accepted');
    expect(accepted).toHaveLength(1);
    const winner = updates[results.findIndex((r) => r.status === 'accepted')]!;
    for (const r of results.filter((x) => x.status !== 'accepted'))
      expect(r).toMatchObject({ status: 'rejected', code: 'DOUBLE_SPEND' });
    expect(await env.redis.hget(env.k.spent, `${create.txId}:2`)).toBe(winner.txId);
    expect(await env.reader.spentBy([create.linkOutput!, winner.linkOutput!])).toEqual([winner.txId, null]);
    // The losers left nothing behind.
    for (const u of updates.filter((x) => x !== winner)) expect(await env.redis.hexists(env.k.raw, u.txId)).toBe(0);
  });

  it('accepts a faucet outpoint only once and only for the nonce in the transaction header', async () => {
    const fixedNonce = new BsvTransactionBuilder({ keys, randomBytes: (n) => Buffer.alloc(n, 0x5a) });
    const first = fixedNonce.build({ kind: 'independent', data: data('f1') });
    const second = fixedNonce.build({ kind: 'independent', data: data('f2') });
    expect(await env.publisher.submit(first)).toEqual({ status: 'accepted' });
    expect(await env.publisher.submit(second)).toMatchObject({ status: 'rejected', code: 'DOUBLE_SPEND' });
    // A transaction without a Proofline header naming the nonce cannot claim faucet money.
    const headerless = new Transaction(
      1,
      [
        {
          sourceTXID: faucetTxId('6b'.repeat(16)),
          sourceOutputIndex: 0,
          sequence: 0xffffffff,
          unlockingScript: UnlockingScript.fromHex('00'),
        },
      ],
      [{ satoshis: 1, lockingScript: LockingScript.fromHex(builder.linkLockingScriptHex()) }],
      0,
    );
    const raw = headerless.toHex();
    expect(await env.publisher.submit({ txId: headerless.id('hex'), rawHex: raw })).toMatchObject({
      status: 'rejected',
      code: 'MISSING_INPUT',
    });
  });

  it('rejects an input that spends an unknown output (MISSING_INPUT) and a data output', async () => {
    const orphan = builder.build({
      kind: 'update',
      data: data('x'),
      spends: { txId: 'ab'.repeat(32), vout: 2, satoshis: 1 },
    });
    await expect(env.publisher.submit(orphan)).resolves.toMatchObject({ status: 'rejected', code: 'MISSING_INPUT' });
    const ind = builder.build({ kind: 'independent', data: data('y') });
    await env.publisher.submit(ind);
    const spendsData = builder.build({ kind: 'delete', spends: { txId: ind.txId, vout: 1, satoshis: 0 } });
    await expect(env.publisher.submit(spendsData)).resolves.toMatchObject({
      status: 'rejected',
      code: 'MISSING_INPUT',
    });
  });
});

describe('DevnetBlockProducer and DevnetReader', () => {
  const env = setup();
  afterAll(() => env.cleanup());

  it('creates the genesis block on first use, then a block with the mempool', async () => {
    expect(await env.reader.tipHeight()).toBe(-1);
    const txs = Array.from({ length: 5 }, (_, i) =>
      builder.build({ kind: 'independent', data: data(`r${i}`), contentType: 'text/plain' }),
    );
    for (const tx of txs) await env.publisher.submit(tx);
    const r = await env.producer.produceBlock(T0);
    expect(r).toMatchObject({ status: 'produced', height: 1, txCount: 6 });
    expect(await env.reader.tipHeight()).toBe(1);

    const genesis = (await env.reader.blockByHeight(0))!;
    expect(genesis.header.prevHash).toBe('0'.repeat(64));
    expect(genesis.txIds).toHaveLength(1);
    const block = (await env.reader.blockByHeight(1))!;
    expect(block.hash).toBe(r.status === 'produced' ? r.hash : '');
    expect(block.header.prevHash).toBe(genesis.hash);
    expect(block.txIds.slice(1)).toEqual(txs.map((t) => t.txId));
    expect(parseTransaction((await env.reader.rawTransaction(block.txIds[0]!))!).isCoinbase).toBe(true);
    // Header: real 80 bytes, merkle root of the txIds, hash = reversed sha256d, time = now, regtest bits.
    expect(block.headerHex).toHaveLength(160);
    expect(block.header.merkleRoot).toBe(merkleRoot(block.txIds));
    expect(blockHash(block.headerHex)).toBe(block.hash);
    expect(BigInt(`0x${block.hash}`) <= BigInt(`0x7fffff${'0'.repeat(58)}`)).toBe(true);
    expect(block.time).toEqual(T0);
    expect(block.header.bits).toBe(0x207fffff);
    expect(await env.redis.zcard(env.k.mempool)).toBe(0);

    const incl = await env.reader.inclusions([...txs.map((t) => t.txId), 'cd'.repeat(32)]);
    expect(incl[5]).toBeNull();
    txs.forEach((tx, i) => {
      const inc = incl[i]!;
      expect(inc).toMatchObject({ blockHash: block.hash, blockHeight: 1, index: i + 1, blockTime: T0 });
      expect(inc.proof).toMatchObject({
        index: i + 1,
        txOrId: tx.txId,
        target: block.headerHex,
        targetType: 'header',
        proofType: 'branch',
        composite: false,
      });
      expect(verifyTscProof(inc.proof!, tx.txId)).toEqual({ valid: true, root: block.header.merkleRoot });
      expect(tscToMerklePath(inc.proof!, 1).computeRoot(tx.txId)).toBe(block.header.merkleRoot);
    });
    expect(await env.reader.tip()).toEqual({ hash: block.hash, height: 1, time: T0 });
  });

  it('chains blocks by prevHash, produces empty blocks and a spend of a mined output', async () => {
    const create = builder.build({ kind: 'create', data: data('v1') });
    await env.publisher.submit(create);
    await env.producer.produceBlock(new Date(T0.getTime() + 10_000));
    await env.producer.produceBlock(new Date(T0.getTime() + 20_000)); // empty
    const update = builder.build({ kind: 'update', data: data('v2'), spends: create.linkOutput! });
    expect(await env.publisher.submit(update)).toEqual({ status: 'accepted' });
    // A block time never goes backwards even if the clock does.
    await env.producer.produceBlock(new Date(T0.getTime() - 60_000));
    expect(await env.reader.tipHeight()).toBe(4);
    for (let h = 1; h <= 4; h++) {
      const [prev, cur] = [(await env.reader.blockByHeight(h - 1))!, (await env.reader.blockByHeight(h))!];
      expect(cur.header.prevHash).toBe(prev.hash);
      expect(cur.header.time).toBeGreaterThanOrEqual(prev.header.time);
    }
    expect((await env.reader.blockByHeight(3))!.txIds).toHaveLength(1);
    const [inc] = await env.reader.inclusions([update.txId]);
    expect(inc).toMatchObject({ blockHeight: 4, index: 1 });
    expect((await env.reader.blockByHeight(4))!.time).toEqual(new Date(T0.getTime() + 20_000));
  });

  it('a producer that "crashes" after its snapshot loses nothing', async () => {
    const txs = Array.from({ length: 3 }, (_, i) => builder.build({ kind: 'independent', data: data(`c${i}`) }));
    for (const tx of txs) await env.publisher.submit(tx);
    const tipBefore = await env.reader.tip();
    const abandoned = await env.producer.prepareBlock(new Date(T0.getTime() + 30_000));
    expect(abandoned.txIds.slice(1)).toEqual(txs.map((t) => t.txId));
    // ... never committed.
    expect(await env.reader.tip()).toEqual(tipBefore);
    expect(await env.reader.mempool()).toEqual(txs.map((t) => t.txId));
    expect(await env.reader.inclusions([txs[0]!.txId])).toEqual([null]);
    const r = await env.producer.produceBlock(new Date(T0.getTime() + 40_000));
    expect(r).toMatchObject({ status: 'produced', txCount: 4 });
    // The abandoned candidate can no longer commit: the tip moved.
    await expect(env.producer.commitBlock(abandoned)).resolves.toMatchObject({ status: 'stale' });
  });

  it('refuses a candidate whose transactions were mined meanwhile, even on the current tip', async () => {
    const tx = builder.build({ kind: 'independent', data: data('race') });
    await env.publisher.submit(tx);
    const snap = await env.producer.snapshot();
    await env.producer.produceBlock(new Date(T0.getTime() + 50_000));
    // A stale mempool read combined with a fresh tip must not put tx in a second block.
    const fresh = await env.producer.snapshot();
    const bad = env.producer.buildCandidate({ tip: fresh.tip, mempool: snap.mempool }, new Date(T0.getTime() + 60_000));
    await expect(env.producer.commitBlock(bad)).resolves.toMatchObject({
      status: 'stale',
      reason: expect.stringMatching(/NOT_IN_MEMPOOL/),
    });
  });
});

describe('racing producers', () => {
  const env = setup();
  const other = new Redis(testRedisUrl());
  afterAll(async () => {
    await other.quit();
    await env.cleanup();
  });

  it('never put a transaction in two blocks and keep the chain linear', async () => {
    const p2 = new DevnetBlockProducer(other, env.prefix, { keys, attempts: 50 });
    const p1 = new DevnetBlockProducer(env.redis, env.prefix, { keys, attempts: 50 });
    const txs = Array.from({ length: 60 }, (_, i) => builder.build({ kind: 'independent', data: data(`p${i}`) }));
    const submitting = (async () => {
      for (const tx of txs) await env.publisher.submit(tx);
    })();
    const results = await Promise.all([
      submitting,
      ...Array.from({ length: 10 }, (_, i) => (i % 2 ? p1 : p2).produceBlock(new Date(T0.getTime() + i * 1000))),
    ]);
    await p1.produceBlock(new Date(T0.getTime() + 100_000)); // sweep what arrived last
    const produced = results.slice(1).filter((r) => r && r.status === 'produced');
    expect(produced.length).toBeGreaterThan(0);

    const reader = new DevnetReader(env.redis, env.prefix);
    const tip = await reader.tipHeight();
    const seen = new Map<string, number>();
    let prevHash = '0'.repeat(64);
    for (let h = 0; h <= tip; h++) {
      const b = (await reader.blockByHeight(h))!;
      expect(b.header.prevHash).toBe(prevHash);
      expect(b.header.merkleRoot).toBe(merkleRoot(b.txIds));
      prevHash = b.hash;
      for (const id of b.txIds) {
        expect(seen.has(id)).toBe(false);
        seen.set(id, h);
      }
    }
    for (const tx of txs) expect(seen.has(tx.txId)).toBe(true);
    expect(await env.redis.zcard(env.k.mempool)).toBe(0);
    const incl = await reader.inclusions(txs.map((t) => t.txId));
    incl.forEach((inc, i) => expect(inc?.blockHeight).toBe(seen.get(txs[i]!.txId)));
    expect(parseHeader((await reader.blockByHeight(tip))!.headerHex).prevHash).toBe(
      (await reader.blockByHeight(tip - 1))!.hash,
    );
  });
});
