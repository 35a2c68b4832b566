import { randomBytes } from 'node:crypto';
import { blockHash, merkleRoot, parseHeader, tscProof, verifyTscProof } from '@proofline/chain-domain';
import { deriveChainKeys, parseTransaction, tscToMerklePath } from '@proofline/chain-bsv';
import { testRedis, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import type { RedisClient } from '@proofline/shared-redis';
import { DevnetBlockProducer, devnetKeys } from './index';
import type { DevnetKeys } from './index';

const keys = deriveChainKeys();
const T0 = new Date('2026-03-01T12:00:00Z');
const txId = (): string => randomBytes(32).toString('hex');

/**
 * The producer reads only the mempool's txIds (the node's accept script put them there after
 * validating them): these specs enter txIds directly and read what the commit stored.
 */
function setup() {
  const prefix = uniquePrefix('devnet');
  const { redis, cleanup } = testRedis(prefix);
  const k = devnetKeys(prefix);
  let seq = 0;
  return {
    prefix,
    redis,
    cleanup,
    k,
    producer: new DevnetBlockProducer(redis, prefix, { keys }),
    enter: async (txIds: readonly string[]): Promise<void> => {
      for (const id of txIds) await redis.zadd(k.mempool, ++seq, id);
    },
    block: (height: number) => storedBlock(redis, k, height),
    tipHeight: async () => Number((await redis.hget(k.tip, 'height')) ?? -1),
  };
}

/** A committed block as stored: header, txIds, and each txId's TSC proof from its stored branch. */
async function storedBlock(redis: RedisClient, k: DevnetKeys, height: number) {
  const hash = await redis.hget(k.hashes, String(height));
  if (!hash) return null;
  const [headerHex, csv] = await Promise.all([redis.hget(k.headers, hash), redis.hget(k.blockTxIds, hash)]);
  const txIds = (csv ?? '').split(',');
  const mined = await redis.hmget(k.mined, ...txIds);
  return {
    hash,
    headerHex: headerHex ?? '',
    header: parseHeader(headerHex ?? ''),
    txIds,
    inclusions: mined.map((value, index) => {
      const [at, h, i, nodes] = (value ?? '').split('|') as [string, string, string, string];
      return {
        blockHash: at,
        blockHeight: Number(h),
        index: Number(i),
        proof: tscProof(index, txIds[index] ?? '', headerHex ?? '', nodes === '' ? [] : nodes.split(',')),
      };
    }),
  };
}

describe('DevnetBlockProducer', () => {
  const env = setup();
  afterAll(() => env.cleanup());

  it('creates the genesis block on first use, then a block with the mempool, every txId proven', async () => {
    expect(await env.tipHeight()).toBe(-1);
    const txs = Array.from({ length: 5 }, txId);
    await env.enter(txs);
    const r = await env.producer.produceBlock(T0);
    expect(r).toMatchObject({ status: 'produced', height: 1, txCount: 6 });
    expect(await env.tipHeight()).toBe(1);

    const genesis = (await env.block(0))!;
    expect(genesis.header.prevHash).toBe('0'.repeat(64));
    expect(genesis.txIds).toHaveLength(1);
    const block = (await env.block(1))!;
    expect(block.hash).toBe(r.status === 'produced' ? r.hash : '');
    expect(block.header.prevHash).toBe(genesis.hash);
    expect(block.txIds.slice(1)).toEqual(txs);
    expect(parseTransaction((await env.redis.hget(env.k.raw, block.txIds[0]!))!).isCoinbase).toBe(true);
    // Header: real 80 bytes, merkle root of the txIds, hash = reversed sha256d, time = now, regtest bits.
    expect(block.headerHex).toHaveLength(160);
    expect(block.header.merkleRoot).toBe(merkleRoot(block.txIds));
    expect(blockHash(block.headerHex)).toBe(block.hash);
    expect(BigInt(`0x${block.hash}`) <= BigInt(`0x7fffff${'0'.repeat(58)}`)).toBe(true);
    expect(block.header.time).toBe(T0.getTime() / 1000);
    expect(block.header.bits).toBe(0x207fffff);
    expect(await env.redis.zcard(env.k.mempool)).toBe(0);

    block.txIds.forEach((id, i) => {
      const inc = block.inclusions[i]!;
      expect(inc).toMatchObject({ blockHash: block.hash, blockHeight: 1, index: i });
      expect(verifyTscProof(inc.proof, id)).toEqual({ valid: true, root: block.header.merkleRoot });
      expect(tscToMerklePath(inc.proof, 1).computeRoot(id)).toBe(block.header.merkleRoot);
    });
    expect(await env.redis.hgetall(env.k.tip)).toEqual({
      hash: block.hash,
      height: '1',
      time: String(T0.getTime() / 1000),
    });
  });

  it('chains blocks by prevHash, produces empty blocks, and never lets block time go backwards', async () => {
    await env.enter([txId()]);
    await env.producer.produceBlock(new Date(T0.getTime() + 10_000));
    await env.producer.produceBlock(new Date(T0.getTime() + 20_000)); // empty
    const late = txId();
    await env.enter([late]);
    // A block time never goes backwards even if the clock does.
    await env.producer.produceBlock(new Date(T0.getTime() - 60_000));
    expect(await env.tipHeight()).toBe(4);
    for (let h = 1; h <= 4; h++) {
      const [prev, cur] = [(await env.block(h - 1))!, (await env.block(h))!];
      expect(cur.header.prevHash).toBe(prev.hash);
      expect(cur.header.time).toBeGreaterThanOrEqual(prev.header.time);
    }
    expect((await env.block(3))!.txIds).toHaveLength(1);
    const top = (await env.block(4))!;
    expect(top.txIds.slice(1)).toEqual([late]);
    expect(top.inclusions[1]).toMatchObject({ blockHeight: 4, index: 1 });
    expect(top.header.time).toBe((T0.getTime() + 20_000) / 1000);
  });

  it('a producer that "crashes" after its snapshot loses nothing', async () => {
    const txs = Array.from({ length: 3 }, txId);
    await env.enter(txs);
    const tipBefore = await env.redis.hgetall(env.k.tip);
    const abandoned = await env.producer.prepareBlock(new Date(T0.getTime() + 30_000));
    expect(abandoned.txIds.slice(1)).toEqual(txs);
    // ... never committed.
    expect(await env.redis.hgetall(env.k.tip)).toEqual(tipBefore);
    expect(await env.redis.zrange(env.k.mempool, 0, -1)).toEqual(txs);
    expect(await env.redis.hexists(env.k.mined, txs[0]!)).toBe(0);
    const r = await env.producer.produceBlock(new Date(T0.getTime() + 40_000));
    expect(r).toMatchObject({ status: 'produced', txCount: 4 });
    // The abandoned candidate can no longer commit: the tip moved.
    await expect(env.producer.commitBlock(abandoned)).resolves.toMatchObject({ status: 'stale' });
  });

  it('refuses a candidate whose transactions were mined meanwhile, even on the current tip', async () => {
    await env.enter([txId()]);
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
  const other = testRedisClient();
  afterAll(async () => {
    await other.quit();
    await env.cleanup();
  });

  it('never put a transaction in two blocks and keep the chain linear', async () => {
    const p2 = new DevnetBlockProducer(other, env.prefix, { keys, attempts: 50 });
    const p1 = new DevnetBlockProducer(env.redis, env.prefix, { keys, attempts: 50 });
    const txs = Array.from({ length: 60 }, txId);
    const entering = (async () => {
      for (const id of txs) await env.enter([id]);
    })();
    const results = await Promise.all([
      entering,
      ...Array.from({ length: 10 }, (_, i) => (i % 2 ? p1 : p2).produceBlock(new Date(T0.getTime() + i * 1000))),
    ]);
    await p1.produceBlock(new Date(T0.getTime() + 100_000)); // sweep what arrived last
    const produced = results.slice(1).filter((r) => r && r.status === 'produced');
    expect(produced.length).toBeGreaterThan(0);

    const tip = await env.tipHeight();
    const seen = new Map<string, number>();
    let prevHash = '0'.repeat(64);
    for (let h = 0; h <= tip; h++) {
      const b = (await env.block(h))!;
      expect(b.header.prevHash).toBe(prevHash);
      expect(b.header.merkleRoot).toBe(merkleRoot(b.txIds));
      prevHash = b.hash;
      for (const [i, id] of b.txIds.entries()) {
        expect(seen.has(id)).toBe(false);
        seen.set(id, h);
        expect(b.inclusions[i]).toMatchObject({ blockHash: b.hash, blockHeight: h, index: i });
      }
    }
    for (const id of txs) expect(seen.has(id)).toBe(true);
    expect(await env.redis.zcard(env.k.mempool)).toBe(0);
  });
});
