import { createHash } from 'node:crypto';
import { MerklePath } from '@bsv/sdk';
import {
  DUPLICATE_NODE,
  REGTEST_BITS,
  ZERO_HASH,
  blockHash as hashOfHeader,
  merkleBranches,
  mineHeader,
  parseHeader,
  serializeHeader,
  tscProof,
  verifyTscProof,
} from '@proofline/chain-domain';
import type { ChainHeader, TxInclusion } from '@proofline/chain-domain';
import { BsvTransactionBuilder, buildCoinbaseTo, deriveChainKeys, tscToMerklePath } from '@proofline/chain-bsv';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { ArcClient } from './arc-client';
import { bumpToTsc, verifyBump } from './bump';
import { handleArcCallback, parseArcCallback } from './arc-callbacks';
import { trackConfirmations } from './confirmation-pass';
import { HeadersSourceError, WocHeadersClient } from './headers-client';
import { ArcProofStore, arcKeys } from './proof-store';
import { startProtocolFixture } from './testing/protocol-fixture';
import type { FixtureRequest, FixtureReply, ProtocolFixture } from './testing/protocol-fixture';
import { syntheticBlock } from './testing/synthetic-block';

const keys = deriveChainKeys();
const builder = new BsvTransactionBuilder({ keys });
const T0 = new Date('2026-11-01T12:00:00Z');
const TOKEN = 'callback-token-0123456789';

/** A block as a headers service knows it. */
interface KnownBlock {
  hash: string;
  height: number;
  headerHex: string;
  txIds: string[];
  branches: string[][];
}

/**
 * A chain as the two services see it: the blocks the spec mines plus blocks a test adds
 * (a competing block for a reorg). The fixture answers ARC's GET /v1/tx and WoC's header paths
 * from it, with knobs for corrupted BUMPs and blocks that left the main chain.
 */
class ChainView {
  blocks = new Map<string, KnownBlock>();
  mainChain: string[] = []; // hash by height
  corrupt = new Set<string>();
  forgedHeader = new Set<string>();
  /** Paths answered 503 (ARC or the headers source down for them). */
  down = new Set<string>();

  add(b: KnownBlock) {
    this.blocks.set(b.hash, b);
    this.mainChain[b.height] = b.hash;
  }

  where(txId: string): { block: KnownBlock; index: number } | null {
    for (let h = this.mainChain.length - 1; h >= 0; h--) {
      const block = this.blocks.get(this.mainChain[h]!)!;
      const index = block.txIds.indexOf(txId);
      if (index >= 0) return { block, index };
    }
    return null;
  }

  bump(txId: string, block: KnownBlock, index: number): string {
    const nodes = [...block.branches[index]!];
    if (this.corrupt.has(txId))
      nodes[0] =
        nodes[0] === DUPLICATE_NODE
          ? 'ee'.repeat(32)
          : `${nodes[0]!.slice(0, 62)}${nodes[0]!.endsWith('00') ? '01' : '00'}`;
    const proof = {
      index,
      txOrId: txId,
      target: block.headerHex,
      nodes,
      targetType: 'header' as const,
      proofType: 'branch' as const,
      composite: false as const,
    };
    return tscToMerklePath(proof, block.height).toHex();
  }

  answer = (req: FixtureRequest): FixtureReply => {
    if (this.down.has(req.path)) return { status: 503, body: 'unavailable' };
    const tip = this.mainChain.length - 1;
    let m = /^\/v1\/tx\/([0-9a-f]{64})$/.exec(req.path);
    if (m) {
      const txId = m[1]!;
      const at = this.where(txId);
      if (!at)
        return {
          status: 404,
          body: {
            type: 'https://arc.bitcoinsv.com/errors/404',
            title: 'Not found',
            status: 404,
            detail: 'Transaction could not be found',
            txid: txId,
          },
        };
      return {
        status: 200,
        body: {
          txid: txId,
          txStatus: 'MINED',
          blockHash: at.block.hash,
          blockHeight: at.block.height,
          merklePath: this.bump(txId, at.block, at.index),
          extraInfo: '',
        },
      };
    }
    if (req.path === '/chain/info')
      return { status: 200, body: { chain: 'regtest', blocks: tip, bestblockhash: this.mainChain[tip] } };
    m = /^\/block\/([0-9a-f]{64})\/header$/.exec(req.path);
    const b = m && this.blocks.get(m[1]!);
    if (!b) return { status: 404, body: 'unknown block' };
    const h = parseHeader(b.headerHex);
    const onMain = this.mainChain[b.height] === b.hash;
    return {
      status: 200,
      body: {
        hash: b.hash,
        confirmations: onMain ? tip - b.height + 1 : -1,
        height: b.height,
        version: h.version,
        merkleroot: h.merkleRoot,
        time: h.time,
        nonce: this.forgedHeader.has(b.hash) ? h.nonce + 1 : h.nonce,
        bits: h.bits.toString(16).padStart(8, '0'),
        previousblockhash: h.prevHash,
      },
    };
  };
}

/** A block on `prev` (genesis when null): a real coinbase first, then `txIds`, under a mined header. */
function mineBlock(prev: KnownBlock | null, txIds: readonly string[], time: Date): KnownBlock {
  const height = prev ? prev.height + 1 : 0;
  const all = [buildCoinbaseTo(height, builder.fundingLockingScriptHex(), 'proofs spec').txId, ...txIds];
  const { root, branches } = merkleBranches(all);
  const mined = mineHeader({
    version: 0x20000000,
    prevHash: prev?.hash ?? ZERO_HASH,
    merkleRoot: root,
    time: Math.floor(time.getTime() / 1000),
    bits: REGTEST_BITS,
    nonce: 0,
  });
  return { hash: mined.hash, height, headerHex: mined.hex, txIds: all, branches };
}

/** What a chain's reader answers for a transaction of `b`: its place and its TSC proof. */
function inclusionIn(b: KnownBlock, index: number): TxInclusion {
  return {
    blockHash: b.hash,
    blockHeight: b.height,
    blockTime: new Date(parseHeader(b.headerHex).time * 1000),
    index,
    proof: tscProof(index, b.txIds[index]!, b.headerHex, b.branches[index]!),
  };
}

describe('BUMP proofs from a mined block, verified before storing', () => {
  const prefix = uniquePrefix('arc-proofs');
  const { redis, cleanup } = testRedis(prefix);
  const store = new ArcProofStore(redis, prefix);
  const view = new ChainView();
  let fx: ProtocolFixture;
  let client: ArcClient;
  let headers: WocHeadersClient;
  let block: KnownBlock;
  let records: string[];
  let emptyBlock: KnownBlock;
  let blockInclusions: (TxInclusion | null)[];

  beforeAll(async () => {
    fx = await startProtocolFixture(view.answer);
    client = new ArcClient({ url: fx.url, timeoutMs: 2000 });
    headers = new WocHeadersClient({ url: fx.url, timeoutMs: 2000, maxRps: Infinity });
    records = [];
    for (let i = 0; i < 6; i++) {
      const tx = builder.build({
        kind: 'independent',
        data: new Uint8Array(Buffer.from(`record ${i}`)),
        contentType: 'text/plain',
        funding: [{ txId: createHash('sha256').update(`funding ${i}`).digest('hex'), vout: 0, satoshis: 1000 }],
      });
      records.push(tx.txId);
    }
    const genesis = mineBlock(null, [], T0);
    view.add(genesis);
    block = mineBlock(genesis, records, T0);
    view.add(block);
    emptyBlock = mineBlock(block, [], new Date(T0.getTime() + 10_000));
    view.add(emptyBlock);
    blockInclusions = block.txIds.map((_, index) => inclusionIn(block, index));
  });
  afterAll(async () => {
    await fx.close();
    await cleanup();
  });

  const chainHeader = (b: KnownBlock, confirmations = 1): ChainHeader => ({
    hash: b.hash,
    height: b.height,
    confirmations,
    headerHex: b.headerHex,
  });

  it('the test block has 7 transactions, so its tree has duplicated nodes', () => {
    expect(block.txIds).toHaveLength(7);
    expect(block.branches.flat()).toContain(DUPLICATE_NODE);
  });

  it("converts each transaction's BUMP into the block's own TSC proof, which the sdk and the TSC fold both accept", () => {
    const root = parseHeader(block.headerHex).merkleRoot;
    block.txIds.forEach((txId, index) => {
      const bump = view.bump(txId, block, index);
      const converted = bumpToTsc(bump, txId, block.headerHex);
      if (!converted.ok) throw new Error(converted.detail);
      expect(converted.proof).toEqual(blockInclusions[index]!.proof);
      expect(converted.height).toBe(block.height);
      expect(MerklePath.fromHex(bump).computeRoot(txId)).toBe(root);
      expect(verifyTscProof(converted.proof, txId)).toEqual({ valid: true, root });
      expect(
        verifyBump({ txId, blockHash: block.hash, blockHeight: block.height, merklePath: bump }, chainHeader(block)),
      ).toMatchObject({ ok: true, proof: converted.proof });
    });
  });

  it("reads plain single-transaction BUMPs with Buffers (no sdk) and gives the sdk's proof for every transaction of blocks of 1..300", () => {
    block.txIds.forEach((txId, index) => {
      const converted = bumpToTsc(view.bump(txId, block, index), txId, block.headerHex);
      expect(converted).toMatchObject({ ok: true, height: block.height });
      expect(converted.ok && converted.path).toBeUndefined();
    });
    for (const n of [1, 2, 3, 6, 17, 64, 255, 300]) {
      const txIds = Array.from({ length: n }, (_, i) => createHash('sha256').update(`plain-${n}-${i}`).digest('hex'));
      const { headerHex: header, proofs } = syntheticBlock(n, 777, txIds);
      for (const [i, { proof }] of proofs.entries()) {
        const txId = txIds[i]!;
        const hex = tscToMerklePath(proof, 777).toHex();
        const converted = bumpToTsc(hex, txId, header);
        if (!converted.ok) throw new Error(converted.detail);
        expect(converted.proof).toEqual(proof);
        // the sdk reads the same BUMP to the same root
        expect(MerklePath.fromHex(hex).computeRoot(txId)).toBe(parseHeader(header).merkleRoot);
        expect(verifyTscProof(converted.proof, txId).valid).toBe(true);
      }
    }
  });

  it('converts compound BUMPs (several txids, computed siblings) to the same proofs', () => {
    for (const subset of [
      [0, 3, 6],
      [1, 2],
      [0, 1, 2, 3, 4, 5, 6],
    ]) {
      const compound = MerklePath.fromHex(view.bump(block.txIds[subset[0]!]!, block, subset[0]!));
      for (const i of subset.slice(1)) compound.combine(MerklePath.fromHex(view.bump(block.txIds[i]!, block, i)));
      const hex = compound.toHex();
      for (const i of subset) {
        const converted = bumpToTsc(hex, block.txIds[i]!, block.headerHex);
        if (!converted.ok) throw new Error(converted.detail);
        expect(converted.proof).toEqual(blockInclusions[i]!.proof);
        // a compound BUMP is not the plain shape: the sdk reads it (and folds it again in verifyBump)
        expect(converted.path).toBeDefined();
      }
    }
  });

  it('handles the single-transaction block (no nodes)', () => {
    const coinbase = emptyBlock.txIds[0]!;
    const bump = view.bump(coinbase, emptyBlock, 0);
    const verified = verifyBump(
      { txId: coinbase, blockHash: emptyBlock.hash, blockHeight: emptyBlock.height, merklePath: bump },
      chainHeader(emptyBlock),
    );
    expect(verified).toMatchObject({ ok: true, proof: { index: 0, nodes: [] } });
  });

  it('refuses corrupted, foreign, misplaced and malformed claims with a typed reason', () => {
    const txId = block.txIds[3]!;
    const good = { txId, blockHash: block.hash, blockHeight: block.height, merklePath: view.bump(txId, block, 3) };
    view.corrupt.add(txId);
    const corrupted = { ...good, merklePath: view.bump(txId, block, 3) };
    view.corrupt.delete(txId);
    expect(verifyBump(corrupted, chainHeader(block))).toMatchObject({ ok: false, reason: 'ROOT_MISMATCH' });
    expect(
      verifyBump({ ...good, txId: records[0] === txId ? records[1]! : 'cd'.repeat(32) }, chainHeader(block)),
    ).toMatchObject({ ok: false, reason: 'TX_NOT_IN_BUMP' });
    // not hex: anywhere in it, an odd length, nothing at all
    for (const merklePath of [
      'zz',
      `${good.merklePath.slice(0, 40)}zz${good.merklePath.slice(42)}`,
      `${good.merklePath}0`,
      '',
    ])
      expect(verifyBump({ ...good, merklePath }, chainHeader(block))).toMatchObject({
        ok: false,
        reason: 'MALFORMED_BUMP',
        detail: 'the merklePath is not hex',
      });
    expect(verifyBump({ ...good, merklePath: good.merklePath.slice(0, 20) }, chainHeader(block))).toMatchObject({
      ok: false,
      reason: 'MALFORMED_BUMP',
    });
    expect(verifyBump({ ...good, blockHeight: block.height + 1 }, chainHeader(block))).toMatchObject({
      ok: false,
      reason: 'HEIGHT_MISMATCH',
    });
    expect(verifyBump(good, { ...chainHeader(block), height: block.height + 1 })).toMatchObject({
      ok: false,
      reason: 'HEIGHT_MISMATCH',
    });
    expect(verifyBump(good, chainHeader(block, -1))).toMatchObject({ ok: false, reason: 'NOT_ON_MAIN_CHAIN' });
    expect(verifyBump(good, null)).toMatchObject({ ok: false, reason: 'HEADER_UNAVAILABLE' });
    // A header for the claimed hash that does not hash to it.
    expect(verifyBump(good, { ...chainHeader(block), headerHex: emptyBlock.headerHex })).toMatchObject({
      ok: false,
      reason: 'HEADER_HASH_MISMATCH',
    });
    // A header that hashes to the claimed hash but misses its own (mainnet-like) target.
    const hard = serializeHeader({ ...parseHeader(block.headerHex), bits: 0x1d00ffff }).toString('hex');
    const hardHash = hashOfHeader(hard);
    expect(
      verifyBump(
        { ...good, blockHash: hardHash },
        { hash: hardHash, height: block.height, confirmations: 1, headerHex: hard },
      ),
    ).toMatchObject({ ok: false, reason: 'HEADER_ABOVE_TARGET' });
    // The BUMP's own height differs from the block's.
    const wrongHeight = MerklePath.fromHex(good.merklePath);
    wrongHeight.blockHeight = block.height + 5;
    expect(verifyBump({ ...good, merklePath: wrongHeight.toHex() }, chainHeader(block))).toMatchObject({
      ok: false,
      reason: 'HEIGHT_MISMATCH',
    });
  });

  it('headers client: rebuilds each header from the JSON fields and refuses one that does not hash to the block', async () => {
    const h = await headers.headerByHash(block.hash);
    expect(h).toEqual({ hash: block.hash, height: block.height, confirmations: 2, headerHex: block.headerHex });
    await expect(headers.tip()).resolves.toEqual({ height: emptyBlock.height, hash: emptyBlock.hash });
    await expect(headers.headerByHash('ef'.repeat(32))).resolves.toBeNull();
    view.forgedHeader.add(block.hash);
    // A client that has not kept this block's header asks the source, and refuses the forgery.
    const cold = new WocHeadersClient({ url: fx.url, timeoutMs: 2000, maxRps: Infinity });
    await expect(cold.headerByHash(block.hash)).rejects.toBeInstanceOf(HeadersSourceError);
    // The header kept by hash is the one that hashed to it: a forgery served later never replaces it.
    await expect(headers.headerByHash(block.hash)).resolves.toMatchObject({ headerHex: block.headerHex });
    view.forgedHeader.delete(block.hash);
  });

  it("tracker: polls, verifies and stores; the stored proofs read back exactly as the block's TSC proofs", async () => {
    const unknownTx = 'ab'.repeat(32);
    view.corrupt.add(block.txIds[5]!);
    const report = await trackConfirmations({
      client,
      headers,
      store,
      txIds: [...block.txIds, unknownTx],
      concurrency: 3,
    });
    expect(new Set(report.proven)).toEqual(new Set(block.txIds.filter((_, i) => i !== 5)));
    expect(report.failed).toEqual([expect.objectContaining({ txId: block.txIds[5], reason: 'ROOT_MISMATCH' })]);
    expect(report.unknown).toEqual([unknownTx]);
    expect(report.tipHeight).toBe(emptyBlock.height);
    expect(await store.tipHeight()).toBe(emptyBlock.height);

    const stored = await store.inclusions([...block.txIds, unknownTx]);
    block.txIds.forEach((_, i) => expect(stored[i]).toEqual(i === 5 ? null : blockInclusions[i]));
    expect(stored[7]).toBeNull();
    // The refused proof was never stored; a later poll with a good BUMP stores it.
    expect(
      await redis.hexists(arcKeys(prefix).of(block.txIds[5]!).inclusions, Buffer.from(block.txIds[5]!, 'hex')),
    ).toBe(0);
    view.corrupt.delete(block.txIds[5]!);
    const again = await trackConfirmations({ client, headers, store, txIds: [block.txIds[5]!] });
    expect(again.proven).toEqual([block.txIds[5]]);
    expect((await store.inclusions([block.txIds[5]!]))[0]).toEqual(blockInclusions[5]);

    expect(await store.txIdsOfBlock(block.hash)).toEqual(block.txIds);
    await expect(store.blockByHash(block.hash)).resolves.toMatchObject({
      hash: block.hash,
      height: block.height,
      headerHex: block.headerHex,
    });
    await expect(store.blockByHeight(block.height)).resolves.toMatchObject({ hash: block.hash });
    await expect(store.blockByHeight(99)).resolves.toBeNull();
  });

  it('callbacks: a wrong token is a 401 that stores nothing; single and batch payloads feed the same verified path, idempotently', async () => {
    const coinbase = emptyBlock.txIds[0]!;
    const mined = {
      timestamp: '2026-11-22T00:00:00Z',
      txid: coinbase,
      txStatus: 'MINED',
      blockHash: emptyBlock.hash,
      blockHeight: emptyBlock.height,
      merklePath: view.bump(coinbase, emptyBlock, 0),
    };
    const deps = { headers, store, token: TOKEN };
    for (const auth of [undefined, 'Bearer wrong-token', TOKEN, `Bearer ${TOKEN}x`]) {
      await expect(handleArcCallback(deps, mined, auth)).resolves.toMatchObject({
        httpStatus: 401,
        errorCode: 'ARC_CALLBACK_UNAUTHORIZED',
      });
    }
    expect(await store.inclusions([coinbase])).toEqual([null]);
    await expect(
      handleArcCallback(deps, { txid: 'nope', txStatus: 'MINED' }, `Bearer ${TOKEN}`),
    ).resolves.toMatchObject({ httpStatus: 400, errorCode: 'ARC_CALLBACK_INVALID' });

    const seen = { timestamp: 'x', txid: 'cd'.repeat(32), txStatus: 'SEEN_ON_NETWORK' };
    const batch = { count: 2, callbacks: [mined, seen] };
    const first = await handleArcCallback(deps, batch, `Bearer ${TOKEN}`);
    expect(first).toMatchObject({
      httpStatus: 200,
      proven: [coinbase],
      failed: [],
      hints: [expect.objectContaining({ txid: seen.txid })],
    });
    const before = await store.inclusions([coinbase]);
    expect(before[0]).toMatchObject({ blockHash: emptyBlock.hash, blockHeight: emptyBlock.height, index: 0 });
    const dup = await handleArcCallback(deps, mined, `Bearer ${TOKEN}`);
    expect(dup).toMatchObject({ httpStatus: 200, proven: [coinbase] });
    expect(await store.inclusions([coinbase])).toEqual(before);
    expect(await store.txIdsOfBlock(emptyBlock.hash)).toEqual([coinbase]);

    // A callback carrying a corrupted BUMP is refused and stores nothing.
    const other = block.txIds[0]!;
    await redis.hdel(arcKeys(prefix).of(other).inclusions, Buffer.from(other, 'hex'));
    view.corrupt.add(other);
    const bad = await handleArcCallback(
      deps,
      {
        txid: other,
        txStatus: 'MINED',
        blockHash: block.hash,
        blockHeight: block.height,
        merklePath: view.bump(other, block, 0),
      },
      `Bearer ${TOKEN}`,
    );
    view.corrupt.delete(other);
    expect(bad).toMatchObject({
      httpStatus: 200,
      proven: [],
      failed: [expect.objectContaining({ txId: other, reason: 'ROOT_MISMATCH' })],
    });
    expect(await store.inclusions([other])).toEqual([null]);
    expect(parseArcCallback(batch, `Bearer ${TOKEN}`, '')).toMatchObject({ httpStatus: 401 });
  });

  it('tracker: ARC or the headers source down leaves the transactions waiting, nothing stored', async () => {
    const [a, b] = [block.txIds[1]!, block.txIds[2]!];
    const k = arcKeys(prefix);
    for (const t of [a, b]) await redis.hdel(k.of(t).inclusions, Buffer.from(t, 'hex'));
    view.down.add(`/v1/tx/${a}`);
    view.down.add(`/block/${block.hash}/header`);
    view.down.add('/chain/info');
    // A client that has not seen the block yet (the shared one keeps its header by hash).
    const cold = new WocHeadersClient({ url: fx.url, timeoutMs: 2000, maxRps: Infinity });
    const report = await trackConfirmations({ client, headers: cold, store, txIds: [a, b] });
    expect(report.errors).toEqual([
      { txId: a, error: expect.objectContaining({ reason: 'server-error', retryable: true }) },
    ]);
    expect(report.failed).toEqual([expect.objectContaining({ txId: b, reason: 'HEADER_UNAVAILABLE' })]);
    expect(report.proven).toEqual([]);
    expect(report.tipHeight).toBeNull();
    expect(await store.inclusions([a, b])).toEqual([null, null]);
    view.down.clear();
    const later = await trackConfirmations({ client, headers, store, txIds: [a, b] });
    expect(new Set(later.proven)).toEqual(new Set([a, b]));
  });

  it('reorg: a stored block that leaves the main chain loses its proofs, and the tracker proves them again in the new block', async () => {
    await trackConfirmations({ client, headers, store, txIds: block.txIds });
    expect((await store.inclusions(block.txIds)).every((i) => i?.blockHash === block.hash)).toBe(true);
    // A competing block at the same height, with the same records in another order and another
    // coinbase, and a new block on top of it: the old block and the empty block above it are stale.
    const otherCoinbase = 'c0'.repeat(32);
    const txIds = [otherCoinbase, ...block.txIds.slice(1).reverse()];
    const { root, branches } = merkleBranches(txIds);
    const prev = parseHeader(block.headerHex).prevHash;
    const mined = mineHeader({
      version: 0x20000000,
      prevHash: prev,
      merkleRoot: root,
      time: parseHeader(block.headerHex).time + 1,
      bits: 0x207fffff,
      nonce: 0,
    });
    const replacement: KnownBlock = { hash: mined.hash, height: block.height, headerHex: mined.hex, txIds, branches };
    view.add(replacement);
    const top = mineHeader({
      version: 0x20000000,
      prevHash: mined.hash,
      merkleRoot: 'c1'.repeat(32),
      time: parseHeader(block.headerHex).time + 2,
      bits: 0x207fffff,
      nonce: 0,
    });
    view.add({
      hash: top.hash,
      height: block.height + 1,
      headerHex: top.hex,
      txIds: ['c1'.repeat(32)],
      branches: [[]],
    });

    const report = await store.reconcile(headers, 6);
    expect(report.tip).toEqual({ height: block.height + 1, hash: top.hash });
    expect(report.dropped.map((d) => d.blockHash).sort()).toEqual([block.hash, emptyBlock.hash].sort());
    expect(new Set(report.dropped.find((d) => d.blockHash === block.hash)!.txIds)).toEqual(new Set(block.txIds));
    expect(await store.inclusions(block.txIds)).toEqual(block.txIds.map(() => null));
    await expect(store.blockByHash(block.hash)).resolves.toBeNull();
    expect(await store.txIdsOfBlock(block.hash)).toEqual([]);
    const k = arcKeys(prefix);
    for (const t of block.txIds) {
      expect(await redis.hexists(k.of(t).inclusions, Buffer.from(t, 'hex'))).toBe(0);
      expect(await redis.exists(k.of(t).blockTxIds(block.hash), k.of(t).blockTxIds(emptyBlock.hash))).toBe(0);
    }
    expect(await redis.exists(k.blockShards(block.hash), k.blockShards(emptyBlock.hash))).toBe(0);
    expect(await redis.zscore(k.byHeight, block.hash)).toBeNull();

    const again = await trackConfirmations({ client, headers, store, txIds: block.txIds.slice(1) });
    expect(new Set(again.proven)).toEqual(new Set(block.txIds.slice(1)));
    const moved = await store.inclusions(block.txIds.slice(1));
    moved.forEach((inc, i) => {
      const txId = block.txIds[i + 1]!;
      expect(inc).toMatchObject({ blockHash: replacement.hash, blockHeight: block.height, index: txIds.indexOf(txId) });
      expect(verifyTscProof(inc!.proof!, txId)).toMatchObject({ valid: true, root });
    });
    expect(await store.tipHeight()).toBe(block.height + 1);
    // Nothing left to drop: the stored blocks are all on the main chain now.
    expect((await store.reconcile(headers, 6)).dropped).toEqual([]);
  });
});
