import { randomBytes } from 'node:crypto';
import { DUPLICATE_NODE, tscProof, verifyTscProof } from '@proofline/chain-domain';
import { loadConfig } from '@proofline/shared-config';
import { TX_SHARDS, txShard } from '@proofline/shared-redis';
import { testRedis, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import type { VerifiedProof } from './bump';
import { createArcServices } from './arc-services';
import { ArcBlocks } from './arc-blocks';
import { ArcProofStore, DROP_MARK_MS, arcKeys } from './proof-store';
import { syntheticBlock } from './testing/synthetic-block';

describe('ArcProofStore', () => {
  const prefix = uniquePrefix('arc-store');
  const { redis, cleanup } = testRedis(prefix);
  const store = new ArcProofStore(redis, prefix);
  afterAll(cleanup);

  it('answers inclusions of any number of txIds in two round trips, duplicates ("*") intact', async () => {
    const block = syntheticBlock(1001, 500);
    await store.storeProofs(block.proofs);
    // A client without auto-pipelining, so every pipeline() call is the store's own.
    const plain = testRedisClient({ enableAutoPipelining: false, maxRetriesPerRequest: 3 });
    const counted = new ArcProofStore(plain, prefix);
    await plain.ping(); // connected: no handshake among the counted commands
    const send = jest.spyOn(plain, 'sendCommand');
    const pipeline = jest.spyOn(plain, 'pipeline');
    const asked = [...block.txIds, randomBytes(32).toString('hex')];
    const got = await counted.inclusions(asked);
    // One HMGET of the inclusions per txId shard asked (all sent before any answer: one round
    // trip), then one pipeline: HMGET of the block record and HMGET of its top's fields.
    const shards = new Set(asked.map(txShard)).size;
    expect(shards).toBeGreaterThan(60);
    expect(send.mock.calls.map(([command]) => command.name)).toEqual(Array(shards + 2).fill('hmget'));
    expect(pipeline).toHaveBeenCalledTimes(1);
    send.mockClear();
    await expect(counted.inclusions([randomBytes(32).toString('hex')])).resolves.toEqual([null]);
    expect(send).toHaveBeenCalledTimes(1); // nothing proven: no second round trip
    send.mockRestore();
    pipeline.mockRestore();
    await plain.quit();
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
    expect(
      (await redis.hgetBuffer(k.of(small.txIds[3]!).inclusions, Buffer.from(small.txIds[3]!, 'hex')))!.length,
    ).toBe(41);
    expect((await redis.hgetBuffer(k.blocks, Buffer.from(small.hash, 'hex')))!.length).toBe(84);
    expect(await redis.hlen(k.blockTop(small.hash))).toBe(64 + 32 + 16 + 8 + 4 + 2);
    expect(await redis.object('ENCODING', k.blockTop(small.hash))).toBe('listpack');
    expect(await store.txIdsOfBlock(small.hash)).toEqual(small.txIds);

    const large = syntheticBlock(1500, 505); // depth 11: 5 levels per record, 6 shared
    await store.storeProofs(large.proofs.slice(0, 700));
    await store.storeProofs(large.proofs.slice(700));
    expect(
      (await redis.hgetBuffer(k.of(large.txIds[9]!).inclusions, Buffer.from(large.txIds[9]!, 'hex')))!.length,
    ).toBe(41 + 32 * 5);
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
    expect((await redis.hgetBuffer(k.of(txId).inclusions, Buffer.from(txId, 'hex')))!.length).toBe(41 + 32 * 14);
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
      await redis.hset(k.of(p.txId).inclusions, Buffer.from(p.txId, 'hex'), value);
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
      await redis.hset(k.of(p.txId).inclusions, Buffer.from(p.txId, 'hex'), value);
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
    const lists = [...new Set(block.txIds.map(txShard))].map((s) => k.shard(s).blockTxIds(block.hash));
    for (const list of lists) expect(await redis.type(list)).toBe('string');
    const lengths = await Promise.all(lists.map((list) => redis.strlen(list)));
    expect(lengths.reduce((a, b) => a + b, 0)).toBe(32 * 40);
    expect((await redis.smembers(k.blockShards(block.hash))).map(Number).sort((a, b) => a - b)).toEqual(
      [...new Set(block.txIds.map(txShard))].sort((a, b) => a - b),
    );
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

    // Legacy layout: the block's txIds (of a shard) in a SET.
    const legacy = syntheticBlock(8, 504);
    await store.storeProofs(legacy.proofs.slice(0, 4));
    for (const t of legacy.txIds.slice(0, 4)) await redis.del(k.of(t).blockTxIds(legacy.hash));
    for (const t of legacy.txIds.slice(0, 4)) await redis.sadd(k.of(t).blockTxIds(legacy.hash), Buffer.from(t, 'hex'));
    await store.storeProofs(legacy.proofs.slice(4));
    expect(await redis.type(k.of(legacy.txIds[0]!).blockTxIds(legacy.hash))).toBe('set');
    expect(await store.txIdsOfBlock(legacy.hash)).toEqual(legacy.txIds);
    expect((await store.dropBlock(legacy.hash, 504)).sort()).toEqual([...legacy.txIds].sort());
    expect(await store.inclusions(legacy.txIds)).toEqual(legacy.txIds.map(() => null));
    expect(await redis.exists(k.blockTop(block.hash))).toBe(1);
    expect((await store.dropBlock(block.hash, 502)).sort()).toEqual(block.txIds.slice(1).sort());
    for (const list of lists) expect(await redis.exists(list)).toBe(0);
    expect(await redis.exists(k.blockTop(block.hash), k.blockShards(block.hash))).toBe(0);
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

  it('raiseTip only moves the tip up, atomically: raises racing in any order end at the highest; setTip (the reorg check) may lower it', async () => {
    const racing = new ArcProofStore(redis, `${prefix}:raise`);
    const hashOf = (h: number) => h.toString(16).padStart(64, '0');
    await expect(racing.raiseTip({ height: 10, hash: hashOf(10) })).resolves.toBe(true);
    await expect(racing.raiseTip({ height: 9, hash: hashOf(9) })).resolves.toBe(false);
    await expect(racing.raiseTip({ height: 10, hash: hashOf(10) })).resolves.toBe(false);
    const heights = Array.from({ length: 40 }, (_, i) => 11 + ((i * 17) % 40));
    const moved = await Promise.all(heights.map((h) => racing.raiseTip({ height: h, hash: hashOf(h) })));
    expect(moved.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    await expect(racing.tip()).resolves.toEqual({ height: 50, hash: hashOf(50) });
    await racing.setTip({ height: 48, hash: hashOf(48) });
    await expect(racing.tip()).resolves.toEqual({ height: 48, hash: hashOf(48) });
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

describe('ArcProofStore: the owner index (a tenant’s blocks)', () => {
  const prefix = uniquePrefix('arc-owners');
  const { redis, cleanup } = testRedis(prefix);
  const store = new ArcProofStore(redis, prefix);
  const blocks = new ArcBlocks(store, null, prefix);
  const k = arcKeys(prefix);
  const owner = new Map<string, string>();
  store.setOwnerLookup(async (txIds) => txIds.map((t) => owner.get(t) ?? null));
  afterAll(cleanup);

  /** A block whose txIds belong, in turn, to the owners given (null: nobody's). */
  function ownedBlock(height: number, owners: readonly (string | null)[]) {
    const block = syntheticBlock(owners.length, height);
    block.txIds.forEach((t, i) => {
      const o = owners[i];
      if (o) owner.set(t, o);
    });
    return block;
  }
  const of = (block: { txIds: string[] }, o: string, owners: readonly (string | null)[]) =>
    block.txIds.filter((_, i) => owners[i] === o);

  it("lists an owner's blocks with its count and its txIds in block order, idempotently, and nobody else's", async () => {
    const owners = ['acme', 'zeta', null, 'acme', 'acme', 'zeta', null, 'acme'];
    const block = ownedBlock(700, owners);
    // Out of order and in two batches, one of them stored twice (a callback and a poll).
    await store.storeProofs([...block.proofs.slice(4)].reverse());
    await store.storeProofs(block.proofs.slice(0, 5));
    await store.storeProofs(block.proofs.slice(0, 5));
    const acme = await blocks.ownerBlocks('acme', { first: 10 });
    expect(acme).toMatchObject({ total: 1, hasOlder: false, hasNewer: false });
    expect(acme.blocks).toEqual([
      { hash: block.hash, height: 700, time: new Date((1_790_000_000 + 700) * 1000), count: 4 },
    ]);
    expect(await blocks.ownerBlock('acme', block.hash)).toEqual(acme.blocks[0]);
    // Each batch in block order, batches in the order they were stored.
    expect((await blocks.ownerTxIds('acme', block.hash, 0, 10)).txIds).toEqual([
      block.txIds[4],
      block.txIds[7],
      block.txIds[0],
      block.txIds[3],
    ]);
    expect(await blocks.ownerTxIds('acme', block.hash, 1, 3)).toEqual({
      count: 4,
      txIds: [block.txIds[7], block.txIds[0]],
    });
    expect((await blocks.ownerTxIds('zeta', block.hash, 0, 10)).txIds.sort()).toEqual(of(block, 'zeta', owners).sort());
    expect(await blocks.ownerBlocks('nobody', { first: 10 })).toEqual({
      total: 0,
      blocks: [],
      hasOlder: false,
      hasNewer: false,
    });
    expect(await blocks.ownerBlock('nobody', block.hash)).toBeNull();
    expect(await blocks.ownerTxIds('nobody', block.hash, 0, 10)).toEqual({ count: 0, txIds: [] });
    expect((await redis.smembers(k.blockOwners(block.hash))).sort()).toEqual(['acme', 'zeta']);
    // 32 bytes a txId.
    expect(await redis.hstrlen(k.ownerTxIds('acme'), block.hash)).toBe(4 * 32);
  });

  it('pages newest first on (height, hash) keys that hold still while blocks arrive, both ways', async () => {
    const heights = [10, 11, 12, 12, 13, 14, 15];
    const made = heights.map((h) => ownedBlock(h, ['pager']));
    for (const b of made) await store.storeProofs(b.proofs);
    const order = made
      .map((b, i) => ({ hash: b.hash, height: heights[i]! }))
      .sort((a, b) => b.height - a.height || (a.hash < b.hash ? 1 : -1))
      .map((b) => b.hash);

    const walked: string[] = [];
    let page = await blocks.ownerBlocks('pager', { first: 3 });
    expect(page).toMatchObject({ total: 7, hasNewer: false, hasOlder: true });
    walked.push(...page.blocks.map((b) => b.hash));
    // A newer block arrives mid-walk: the next page starts after the last one seen, nothing twice.
    const newer = ownedBlock(20, ['pager']);
    await store.storeProofs(newer.proofs);
    while (page.hasOlder) {
      const last = page.blocks[page.blocks.length - 1]!;
      page = await blocks.ownerBlocks('pager', { first: 3, after: last });
      expect(page.hasNewer).toBe(true);
      walked.push(...page.blocks.map((b) => b.hash));
    }
    expect(walked).toEqual(order);
    expect(page.total).toBe(8);

    // Backwards from the oldest: last/before, each page newest first.
    const back: string[] = [];
    let prev = await blocks.ownerBlocks('pager', { last: 3 });
    expect(prev).toMatchObject({ hasOlder: false, hasNewer: true });
    back.unshift(...prev.blocks.map((b) => b.hash));
    while (prev.hasNewer) {
      prev = await blocks.ownerBlocks('pager', { last: 3, before: prev.blocks[0]! });
      back.unshift(...prev.blocks.map((b) => b.hash));
    }
    expect(back).toEqual([newer.hash, ...order]);
    // Between two keys: the two blocks at height 12 are told apart by their hash.
    const between = await blocks.ownerBlocks('pager', {
      first: 10,
      after: { height: 13, hash: order[2]! },
      before: { height: 11, hash: order[5]! },
    });
    expect(between.blocks.map((b) => b.hash)).toEqual([order[3], order[4]]);
    expect(between).toMatchObject({ hasNewer: true, hasOlder: false });
  });

  it('moves a txId proven again in another block, and forgets an emptied block', async () => {
    const first = ownedBlock(800, ['mover', 'mover']);
    await store.storeProofs(first.proofs);
    const second = syntheticBlock(2, 801);
    const moved = second.proofs.map((p, i) => ({
      ...p,
      txId: first.txIds[i]!,
      proof: { ...p.proof, txOrId: first.txIds[i]! },
    }));
    await store.storeProofs([moved[0]!]);
    expect((await blocks.ownerBlocks('mover', { first: 5 })).blocks.map((b) => [b.height, b.count])).toEqual([
      [801, 1],
      [800, 1],
    ]);
    await store.storeProofs([moved[1]!]);
    const after = await blocks.ownerBlocks('mover', { first: 5 });
    expect(after.blocks.map((b) => [b.hash, b.count])).toEqual([[second.hash, 2]]);
    expect(after.total).toBe(1);
    expect(await redis.hexists(k.ownerTxIds('mover'), first.hash)).toBe(0);
  });

  it('a dropped block leaves no owner index behind; the drop refuses while an owner still lists it', async () => {
    const owners = ['dropper', 'other', 'dropper'];
    const block = ownedBlock(900, owners);
    const kept = ownedBlock(899, ['dropper']);
    await store.storeProofs([...block.proofs, ...kept.proofs]);
    expect((await blocks.ownerBlocks('dropper', { first: 5 })).total).toBe(2);

    // The script alone refuses while the block has owners, and changes nothing.
    const refused = await store.dropBlockData(
      block.hash,
      900,
      Array.from({ length: TX_SHARDS }, (_, i) => i),
    );
    expect(refused).toEqual({ status: 'OWNERS' });
    expect((await store.inclusions(block.txIds)).every((i) => i?.blockHash === block.hash)).toBe(true);

    expect((await store.dropBlock(block.hash, 900)).sort()).toEqual([...block.txIds].sort());
    expect((await blocks.ownerBlocks('dropper', { first: 5 })).blocks.map((b) => b.hash)).toEqual([kept.hash]);
    expect((await blocks.ownerBlocks('other', { first: 5 })).total).toBe(0);
    expect(await redis.hexists(k.ownerTxIds('dropper'), block.hash)).toBe(0);
    expect(await redis.exists(k.blockOwners(block.hash), k.ownerBlocks('other'), k.ownerTxIds('other'))).toBe(0);
    expect(await blocks.ownerBlock('dropper', block.hash)).toBeNull();
  });

  it('indexes proofs stored before the index (or without a lookup) once asked, idempotently', async () => {
    const plain = new ArcProofStore(redis, prefix);
    const block = ownedBlock(950, ['late', null, 'late']);
    await plain.storeProofs(block.proofs);
    expect((await blocks.ownerBlocks('late', { first: 5 })).total).toBe(0);
    await expect(plain.indexOwnersOfBlock(block.hash)).rejects.toThrow('owner lookup');
    // The backfill indexes them, once …
    const report = await store.indexOwners();
    expect(report.added).toBe(2);
    expect(report.blocks).toBeGreaterThan(0);
    // … and a proof stored again through the indexing store adds nothing more (already listed).
    await store.storeProofs(block.proofs);
    expect(await blocks.ownerTxIds('late', block.hash, 0, 5)).toEqual({
      count: 2,
      txIds: [block.txIds[0], block.txIds[2]],
    });
    expect(await store.indexOwnersOfBlock(block.hash)).toBe(0);
    expect((await blocks.ownerBlocks('late', { first: 5 })).blocks[0]).toMatchObject({ height: 950, count: 2 });
  });
});

describe('ArcProofStore: per-transaction data over txId shards, block data under {arc}', () => {
  const prefix = uniquePrefix('arc-shards');
  const { redis, cleanup } = testRedis(prefix);
  const store = new ArcProofStore(redis, prefix);
  const k = arcKeys(prefix);
  const owner = new Map<string, string>();
  store.setOwnerLookup(async (txIds) => txIds.map((t) => owner.get(t) ?? null));
  afterAll(cleanup);

  /** Every key of block `hash` in every shard and under {arc}, with whether it exists. */
  async function blockKeys(hash: string): Promise<string[]> {
    const names = [
      k.blockTop(hash),
      k.blockShards(hash),
      k.blockOwners(hash),
      ...k.shards.flatMap((sk) => [sk.blockTxIds(hash), sk.dropping(hash)]),
    ];
    const exists = await Promise.all(names.map((n) => redis.exists(n)));
    return names.filter((_, i) => exists[i] === 1);
  }

  it('a walk interrupted after some shards leaves the block visible, refuses stores into the walked shards, and a rerun finishes it exactly once', async () => {
    const block = syntheticBlock(300, 1200);
    block.txIds.forEach((t, i) => owner.set(t, i % 2 === 0 ? 'even' : 'odd'));
    await store.watch(block.txIds, new Date(1000));
    await store.storeProofs(block.proofs);
    expect(await store.watchedCount()).toBe(0);
    const shards = (await redis.smembers(k.blockShards(block.hash))).map(Number).sort((a, b) => a - b);
    expect(shards).toEqual([...new Set(block.txIds.map(txShard))].sort((a, b) => a - b));
    expect(shards.length).toBeGreaterThan(50);

    // The crash: half the shards walked, then nothing (no block-level step).
    const walked = new Set(shards.filter((_, i) => i % 2 === 0));
    const inWalked = block.txIds.filter((t) => walked.has(txShard(t)));
    const inOthers = block.txIds.filter((t) => !walked.has(txShard(t)));
    const first: string[] = [];
    for (const s of walked) first.push(...(await store.dropShard(block.hash, s, new Date(2000))));
    expect(first.sort()).toEqual([...inWalked].sort());
    // Repeating a shard's step drops nothing more.
    expect(await store.dropShard(block.hash, [...walked][0]!, new Date(3000))).toEqual([]);

    // The block is still stored (the next reconcile sees it and walks again); walked txIds read as
    // unproven and are watched again (first watched at the walk), the others still read proven.
    expect(await store.blockByHash(block.hash)).not.toBeNull();
    const read = await store.inclusions(block.txIds);
    block.txIds.forEach((t, i) => expect(read[i] === null).toBe(walked.has(txShard(t))));
    expect(await store.watchedSince(inWalked.slice(0, 5))).toEqual(inWalked.slice(0, 5).map(() => 2000));
    expect(await store.watchedCount()).toBe(inWalked.length);

    // A store racing the walk (a proof verified before the reorg was seen) is refused in the walked
    // shards: nothing written there, the txIds stay watched; stored again elsewhere it is idempotent.
    const refused = await store.storeProofs(block.proofs);
    expect(refused.sort()).toEqual([...inWalked].sort());
    expect((await store.inclusions(inWalked)).every((i) => i === null)).toBe(true);
    expect(await store.watchedCount()).toBe(inWalked.length);

    // The rerun (what the next reconcile does): the rest of the shards, then the block-level data.
    const second = await store.dropBlock(block.hash, 1200, new Date(4000));
    expect(second.sort()).toEqual([...inOthers].sort());
    expect(await store.blockByHash(block.hash)).toBeNull();
    expect(await store.blockByHeight(1200)).toBeNull();
    expect(await store.inclusions(block.txIds)).toEqual(block.txIds.map(() => null));
    expect(await store.watchedCount()).toBe(300);
    expect(await store.txIdsOfBlock(block.hash)).toEqual([]);
    for (const o of ['even', 'odd']) {
      expect(await redis.zscore(k.ownerBlocks(o), block.hash)).toBeNull();
      expect(await redis.hexists(k.ownerTxIds(o), block.hash)).toBe(0);
    }
    // Only the short-lived markers remain of the block.
    const left = await blockKeys(block.hash);
    expect(left.sort()).toEqual(shards.map((s) => k.shard(s).dropping(block.hash)).sort());
    for (const marker of left.slice(0, 3)) {
      const ttl = await redis.pttl(marker);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(DROP_MARK_MS);
    }

    // Run a third time: nothing more dropped, nothing changed.
    expect(await store.dropBlock(block.hash, 1200, new Date(5000))).toEqual([]);
    expect(await store.watchedCount()).toBe(300);
    await store.unwatch(block.txIds);
  });

  it('the block-level step refuses while a shard not walked holds inclusions of the block, and dropBlock walks it', async () => {
    const block = syntheticBlock(40, 1300);
    await store.storeProofs(block.proofs);
    const shards = (await redis.smembers(k.blockShards(block.hash))).map(Number).sort((a, b) => a - b);
    expect(await store.dropBlockData(block.hash, 1300, shards.slice(1))).toEqual({
      status: 'SHARDS',
      shards: [shards[0]],
    });
    expect(await store.blockByHash(block.hash)).not.toBeNull();
    expect((await store.inclusions(block.txIds)).every((i) => i?.blockHash === block.hash)).toBe(true);
    expect((await store.dropBlock(block.hash, 1300)).sort()).toEqual([...block.txIds].sort());
    expect(await store.blockByHash(block.hash)).toBeNull();
    await store.unwatch(block.txIds);
  });

  it('readers racing stores and drops never see an inclusion without its block record and shared top', async () => {
    const blocks = Array.from({ length: 6 }, (_, i) => syntheticBlock(400, 1400 + i));
    const sample = blocks.flatMap((b) => b.txIds.filter((_, i) => i % 7 === 0));
    let running = true;
    let seen = 0;
    const violations: string[] = [];
    // Raw reads in the readers' order: the inclusion first, then its block's record and top.
    const reader = async () => {
      while (running) {
        for (const txId of sample.slice(0, 200)) {
          const inc = await redis.hgetBuffer(k.of(txId).inclusions, Buffer.from(txId, 'hex'));
          if (!inc) continue;
          seen++;
          const hash = inc.subarray(0, 32).toString('hex');
          const [block, top] = await Promise.all([
            redis.hexists(k.blocks, Buffer.from(hash, 'hex')),
            redis.exists(k.blockTop(hash)),
          ]);
          // Still there unless the inclusion was dropped meanwhile (a drop deletes inclusions first).
          if ((block === 0 || top === 0) && (await redis.hexists(k.of(txId).inclusions, Buffer.from(txId, 'hex'))))
            violations.push(txId);
        }
        await new Promise((r) => setImmediate(r));
      }
    };
    const api = async () => {
      while (running) {
        const got = await store.inclusions(sample.slice(0, 300));
        for (const [i, inc] of got.entries())
          if (inc) expect(verifyTscProof(inc.proof!, sample[i]!)).toMatchObject({ valid: true });
      }
    };
    const readers = [reader(), api()];
    try {
      for (const b of blocks) await store.storeProofs(b.proofs);
      for (const b of blocks.slice(0, 3)) await store.dropBlock(b.hash, Number(b.proofs[0]!.blockHeight));
      for (const b of blocks.slice(3)) {
        await store.storeProofs(b.proofs);
        await store.dropBlock(b.hash, b.proofs[0]!.blockHeight);
      }
    } finally {
      running = false;
      await Promise.all(readers);
    }
    expect(violations).toEqual([]);
    expect(seen).toBeGreaterThan(0);
    expect(await store.watchedCount()).toBe(6 * 400);
  });
});
