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
  const mined = mineHeader({ version: 0x20000000, prevHash: randomBytes(32).toString('hex'), merkleRoot: root, time: 1_790_000_000 + height, bits: 0x207fffff, nonce: 0 });
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

  it('answers inclusions of any number of txIds in one round trip, duplicates ("*") intact', async () => {
    const block = syntheticBlock(1001, 500);
    await store.storeProofs(block.proofs);
    await store.inclusions([block.txIds[0]!]); // loads the script (EVALSHA then, at most once, EVAL)
    const send = jest.spyOn(redis, 'sendCommand');
    const asked = [...block.txIds, randomBytes(32).toString('hex')];
    const got = await store.inclusions(asked);
    expect(send).toHaveBeenCalledTimes(1);
    send.mockRestore();
    expect(got[1001]).toBeNull();
    expect(got.slice(0, 1001).every((inc, i) => inc?.proof !== null && inc?.blockHash === block.hash && inc.blockHeight === 500 && inc.index === i)).toBe(true);
    expect(got[1000]!.proof!.nodes).toContain(DUPLICATE_NODE);
    expect(got[1000]!.proof).toEqual(block.proofs[1000]!.proof);
    expect(got[1000]!.blockTime).toEqual(new Date((1_790_000_000 + 500) * 1000));
    for (const i of [0, 517, 1000]) expect(verifyTscProof(got[i]!.proof!, block.txIds[i]!)).toMatchObject({ valid: true });
    await expect(store.inclusions([])).resolves.toEqual([]);
  });

  it('keeps one header per block and about 40 + 32·depth bytes per record', async () => {
    const block = syntheticBlock(64, 501);
    await store.storeProofs(block.proofs);
    const k = arcKeys(prefix);
    const value = await redis.hgetBuffer(k.inclusions, Buffer.from(block.txIds[3]!, 'hex'));
    expect(value!.length).toBe(40 + 32 * 6);
    expect((await redis.hgetBuffer(k.blocks, Buffer.from(block.hash, 'hex')))!.length).toBe(84);
    expect(await store.txIdsOfBlock(block.hash)).toEqual(block.txIds);
  });

  it('lists a block\'s txIds once in 32 bytes each, however often a proof is stored; a block stored as a SET still reads and drops', async () => {
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
    const moved = { ...other.proofs[0]!, txId: block.txIds[0]!, proof: { ...other.proofs[0]!.proof, txOrId: block.txIds[0]! } };
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
    expect((await store.dropBlock(block.hash, 502)).sort()).toEqual(block.txIds.slice(1).sort());
    expect(await redis.exists(k.blockTxIds(block.hash))).toBe(0);
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
