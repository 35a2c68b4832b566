import { randomBytes } from 'node:crypto';
import { DUPLICATE_NODE, merkleBranches, mineHeader, tscProof, verifyTscProof } from '@proofline/chain-domain';
import { loadConfig } from '@proofline/shared-config';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import type { VerifiedProof } from './bump';
import { createArcServices } from './arc-services';
import { arcKeys } from './keys';
import { ArcBlocks } from './arc-blocks';
import { ArcProofStore } from './proof-store';

/** A synthetic block of `n` random txIds with its mined header and every branch. */
function syntheticBlock(n: number, height: number) {
  const txIds = Array.from({ length: n }, () => randomBytes(32).toString('hex'));
  const { root, branches } = merkleBranches(txIds);
  const mined = mineHeader({
    version: 0x20000000,
    prevHash: randomBytes(32).toString('hex'),
    merkleRoot: root,
    time: 1_790_000_000 + height,
    bits: 0x207fffff,
    nonce: 0,
  });
  const proofs: VerifiedProof[] = txIds.map((txId, i) => ({
    ok: true,
    txId,
    blockHash: mined.hash,
    blockHeight: height,
    headerHex: mined.hex,
    proof: tscProof(i, txId, mined.hex, branches[i]!),
  }));
  return { txIds, hash: mined.hash, headerHex: mined.hex, proofs };
}

describe('ArcProofStore', () => {
  const prefix = uniquePrefix('arc-store');
  const { redis, cleanup } = testRedis(prefix);
  const store = new ArcProofStore(redis, prefix);
  afterAll(cleanup);

  it('answers inclusions of any number of txIds in two round trips, duplicates ("*") intact', async () => {
    const block = syntheticBlock(1001, 500);
    await store.storeProofs(block.proofs);
    const send = jest.spyOn(redis, 'sendCommand');
    const pipeline = jest.spyOn(redis, 'pipeline');
    const asked = [...block.txIds, randomBytes(32).toString('hex')];
    const got = await store.inclusions(asked);
    // HMGET of the inclusions, then one pipeline: HMGET of the block record and HMGET of its top's fields.
    expect(send.mock.calls.map(([command]) => command.name)).toEqual(['hmget', 'hmget', 'hmget']);
    expect(pipeline).toHaveBeenCalledTimes(1);
    send.mockRestore();
    pipeline.mockRestore();
    const none = jest.spyOn(redis, 'sendCommand');
    await expect(store.inclusions([randomBytes(32).toString('hex')])).resolves.toEqual([null]);
    expect(none).toHaveBeenCalledTimes(1); // nothing proven: no second round trip
    none.mockRestore();
    expect(got[1001]).toBeNull();
    expect(
      got
        .slice(0, 1001)
        .every(
          (inc, i) =>
            inc?.proof !== null && inc?.blockHash === block.hash && inc.blockHeight === 500 && inc.index === i,
        ),
    ).toBe(true);
    expect(got[1000]!.proof!.nodes).toContain(DUPLICATE_NODE);
    expect(got[1000]!.proof).toEqual(block.proofs[1000]!.proof);
    expect(got[1000]!.blockTime).toEqual(new Date((1_790_000_000 + 500) * 1000));
    for (const i of [0, 517, 1000])
      expect(verifyTscProof(got[i]!.proof!, block.txIds[i]!)).toMatchObject({ valid: true });
    await expect(store.inclusions([])).resolves.toEqual([]);
  });

  it('keeps one header and one shared top per block, and 41 + 32·(depth − 6) bytes per record', async () => {
    const k = arcKeys(prefix);
    const small = syntheticBlock(64, 501); // depth 6: every level is the block's shared top
    await store.storeProofs(small.proofs);
    expect((await redis.hgetBuffer(k.inclusions, Buffer.from(small.txIds[3]!, 'hex')))!.length).toBe(41);
    expect((await redis.hgetBuffer(k.blocks, Buffer.from(small.hash, 'hex')))!.length).toBe(84);
    expect(await redis.hlen(k.blockTop(small.hash))).toBe(64 + 32 + 16 + 8 + 4 + 2);
    expect(await redis.object('ENCODING', k.blockTop(small.hash))).toBe('listpack');
    expect(await store.txIdsOfBlock(small.hash)).toEqual(small.txIds);

    const large = syntheticBlock(1500, 505); // depth 11: 5 levels per record, 6 shared
    await store.storeProofs(large.proofs.slice(0, 700));
    await store.storeProofs(large.proofs.slice(700));
    expect((await redis.hgetBuffer(k.inclusions, Buffer.from(large.txIds[9]!, 'hex')))!.length).toBe(41 + 32 * 5);
    expect(await redis.hlen(k.blockTop(large.hash))).toBeLessThanOrEqual(126);
    const got = await store.inclusions(large.txIds);
    expect(got.map((inc) => inc?.proof)).toEqual(large.proofs.map((p) => p.proof));
    for (const i of [0, 1, 748, 1499])
      expect(verifyTscProof(got[i]!.proof!, large.txIds[i]!)).toMatchObject({ valid: true });
  });

  it('reads a deep proof alone in its block, values stored before the shared top, and values with another number of shared levels', async () => {
    const k = arcKeys(prefix);
    // A mainnet-like proof: depth 20, the only record of its block, a duplicate among its top levels.
    const txId = randomBytes(32).toString('hex');
    const nodes = Array.from({ length: 20 }, (_, level) =>
      level === 17 ? DUPLICATE_NODE : randomBytes(32).toString('hex'),
    );
    const deep: VerifiedProof = {
      ok: true,
      txId,
      blockHash: randomBytes(32).toString('hex'),
      blockHeight: 506,
      headerHex: syntheticBlock(1, 506).headerHex,
      proof: tscProof(786_431, txId, '', nodes),
    };
    await store.storeProofs([deep]);
    expect((await redis.hgetBuffer(k.inclusions, Buffer.from(txId, 'hex')))!.length).toBe(41 + 32 * 14);
    expect(await redis.hlen(k.blockTop(deep.blockHash))).toBe(5);
    const [inc] = await store.inclusions([txId]);
    expect(inc!.index).toBe(786_431);
    expect(inc!.proof!.nodes).toEqual(nodes);

    // The form written before: 40 + 32·depth bytes, every node inline, no top.
    const old = syntheticBlock(12, 507);
    await store.storeProofs(old.proofs);
    await redis.del(k.blockTop(old.hash));
    for (const p of old.proofs) {
      const value = Buffer.alloc(40 + 32 * p.proof.nodes.length);
      Buffer.from(p.blockHash, 'hex').copy(value, 0);
      value.writeUInt32LE(p.proof.index, 32);
      let mask = 0;
      p.proof.nodes.forEach((node, level) => {
        if (node === DUPLICATE_NODE) mask |= 1 << level;
        else Buffer.from(node, 'hex').copy(value, 40 + 32 * level);
      });
      value.writeUInt32LE(mask, 36);
      await redis.hset(k.inclusions, Buffer.from(p.txId, 'hex'), value);
    }
    const read = await store.inclusions(old.txIds);
    expect(read.map((i) => i?.proof)).toEqual(old.proofs.map((p) => p.proof));
    expect(await store.txIdsOfBlock(old.hash)).toEqual(old.txIds);

    // A value written with another number of shared levels (2 here): readers take the inline count from its length.
    const other = syntheticBlock(300, 509); // depth 9: 7 inline, 2 shared
    await store.storeProofs(other.proofs);
    await redis.del(k.blockTop(other.hash));
    for (const p of other.proofs) {
      const nodes = p.proof.nodes;
      const value = Buffer.alloc(41 + 32 * (nodes.length - 2));
      Buffer.from(p.blockHash, 'hex').copy(value, 0);
      value.writeUInt32LE(p.proof.index, 32);
      let mask = 0;
      for (const [level, node] of nodes.entries()) {
        if (node === DUPLICATE_NODE) mask |= 1 << level;
        else if (level < nodes.length - 2) Buffer.from(node, 'hex').copy(value, 41 + 32 * level);
        else {
          const position = Math.floor(p.proof.index / 2 ** level);
          const field = Buffer.alloc(5);
          field.writeUInt8(level, 0);
          field.writeUInt32LE(position % 2 === 0 ? position + 1 : position - 1, 1);
          await redis.hset(k.blockTop(other.hash), field, Buffer.from(node, 'hex'));
        }
      }
      value.writeUInt32LE(mask, 36);
      value.writeUInt8(nodes.length, 40);
      await redis.hset(k.inclusions, Buffer.from(p.txId, 'hex'), value);
    }
    expect((await store.inclusions(other.txIds)).map((i) => i?.proof)).toEqual(other.proofs.map((p) => p.proof));
  });

  it('refuses a proof whose block lost its shared top instead of answering a wrong path', async () => {
    const block = syntheticBlock(100, 508);
    await store.storeProofs(block.proofs);
    await redis.del(arcKeys(prefix).blockTop(block.hash));
    await expect(store.inclusions([block.txIds[42]!])).rejects.toThrow(
      `the stored proof of ${block.txIds[42]!} lacks its block's top node`,
    );
  });

  it("lists a block's txIds once in 32 bytes each, however often a proof is stored; a block stored as a SET still reads and drops", async () => {
    const k = arcKeys(prefix);
    const block = syntheticBlock(40, 502);
    await store.storeProofs(block.proofs.slice(0, 25));
    await store.storeProofs(block.proofs.slice(10)); // 15 again (duplicate callbacks, a callback and a poll)
    await store.storeProofs(block.proofs);
    expect(await redis.type(k.blockTxIds(block.hash))).toBe('string');
    expect(await redis.strlen(k.blockTxIds(block.hash))).toBe(32 * 40);
    expect(await store.txIdsOfBlock(block.hash)).toEqual(block.txIds);

    // A txId proven again in another block (a reorg) is listed there; the old block no longer claims it.
    const other = syntheticBlock(1, 503);
    const moved = {
      ...other.proofs[0]!,
      txId: block.txIds[0]!,
      proof: { ...other.proofs[0]!.proof, txOrId: block.txIds[0]! },
    };
    await store.storeProofs([moved]);
    expect(await store.txIdsOfBlock(block.hash)).toEqual(block.txIds.slice(1));
    expect(await store.txIdsOfBlock(other.hash)).toEqual([block.txIds[0]]);

    // Legacy layout: the block's txIds in a SET.
    const legacy = syntheticBlock(8, 504);
    await store.storeProofs(legacy.proofs.slice(0, 4));
    await redis.del(k.blockTxIds(legacy.hash));
    await redis.sadd(k.blockTxIds(legacy.hash), ...legacy.txIds.slice(0, 4).map((t) => Buffer.from(t, 'hex')));
    await store.storeProofs(legacy.proofs.slice(4));
    expect(await redis.type(k.blockTxIds(legacy.hash))).toBe('set');
    expect(await store.txIdsOfBlock(legacy.hash)).toEqual(legacy.txIds);
    expect((await store.dropBlock(legacy.hash, 504)).sort()).toEqual([...legacy.txIds].sort());
    expect(await store.inclusions(legacy.txIds)).toEqual(legacy.txIds.map(() => null));
    expect(await redis.exists(k.blockTop(block.hash))).toBe(1);
    expect((await store.dropBlock(block.hash, 502)).sort()).toEqual(block.txIds.slice(1).sort());
    expect(await redis.exists(k.blockTxIds(block.hash), k.blockTop(block.hash))).toBe(0);
    // Idempotent: a reorg handled twice (two workers, a retried pass) drops nothing more.
    const watchedBefore = await store.watchedCount();
    expect(await store.dropBlock(block.hash, 502)).toEqual([]);
    expect(await store.watchedCount()).toBe(watchedBefore);
    expect(await store.blockByHash(block.hash)).toBeNull();
  });

  it('tipHeight is -1 until a tip is recorded', async () => {
    const fresh = new ArcProofStore(redis, `${prefix}:fresh`);
    await expect(fresh.tipHeight()).resolves.toBe(-1);
    await fresh.setTip({ height: 42, hash: 'aa'.repeat(32) });
    await expect(fresh.tipHeight()).resolves.toBe(42);
  });

  it('createArcServices wires the configuration', () => {
    const services = createArcServices(loadConfig({ ARC_TIMEOUT_MS: '1000' }).chain, redis, prefix);
    expect(services.store).toBeInstanceOf(ArcProofStore);
    expect(() => createArcServices(loadConfig({}).chain, redis, prefix)).not.toThrow();
  });
});

describe('ArcBlocks.tip', () => {
  const prefix = uniquePrefix('arc-tip');
  const { redis, cleanup } = testRedis(prefix);
  const store = new ArcProofStore(redis, prefix);
  const blocks = new ArcBlocks(store, null, prefix);
  afterAll(cleanup);

  it('is the reported tip once its header is stored, and the newest stored block while it is not', async () => {
    expect(await blocks.tip()).toBeNull();
    const stored = syntheticBlock(1, 40);
    await store.storeHeader({ hash: stored.hash, height: 40, headerHex: stored.headerHex });
    // The confirmation pass records a newer tip before it stores that block's header.
    const next = syntheticBlock(1, 41);
    await store.setTip({ height: 41, hash: next.hash });
    expect(await blocks.tip()).toMatchObject({ hash: stored.hash, height: 40 });
    await store.storeHeader({ hash: next.hash, height: 41, headerHex: next.headerHex });
    expect(await blocks.tip()).toMatchObject({ hash: next.hash, height: 41 });
  });
});
