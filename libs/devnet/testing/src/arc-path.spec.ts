// The ARC publication path against the real devnet node over HTTP, real Redis and real BullMQ:
// batched broadcast, proofs verified before they are stored, faults (ARC down, rejections,
// corrupted BUMPs, unknown txs, reorgs), and the block reader over the proof store.
import { LockingScript, MerklePath, Spend, Transaction } from '@bsv/sdk';
import { ArcSubmitBatcher, ArcTransientError, createArcChain, publishBlockEvent } from '@proofline/chain-arc';
import { parseHeader, refusalCode, verifyTscProof } from '@proofline/chain-domain';
import { nodeTestKit } from '@proofline/devnet';
import type { Refusal } from '@proofline/chain-domain';
import type { FundingUtxo } from '@proofline/chain-wallet';
import { eventually, testBullRedis, testRedis, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { startArcDevnet } from './arc-devnet';
import type { ArcDevnet } from './arc-devnet';

describe('the ARC path on the devnet node (real HTTP, Redis, BullMQ)', () => {
  const prefix = uniquePrefix('arcpath');
  const { redis, cleanup } = testRedis(prefix);
  let dev: ArcDevnet;
  let utxos: FundingUtxo[];
  const raw = new Map<string, Uint8Array>();
  const refusals: Refusal[] = [];
  const hooks = {
    rawTxOf: async (txIds: readonly string[]) => txIds.map((t) => raw.get(t) ?? null),
    onRefused: async (r: Refusal) => {
      refusals.push(r);
    },
  };

  /** A real transaction spending one pool UTXO back to the funding script, paying `fee` satoshis. */
  async function spendOf(u: FundingUtxo, fee: number): Promise<Transaction> {
    const tx = nodeTestKit.transactionSpending(Transaction.fromHex(dev.splitHex(u.txId)), u.vout, dev.fundingKey);
    tx.addOutput({ satoshis: u.satoshis - fee, lockingScript: LockingScript.fromHex(dev.funding.lockingScriptHex) });
    await tx.sign();
    return tx;
  }
  /** {@link spendOf} at 1 sat/kB rounded up, its bytes kept for the confirmation pass's re-broadcasts. */
  async function spendUtxo(
    u: FundingUtxo,
  ): Promise<{ txId: string; rawTx: Uint8Array; efHex: string; tx: Transaction }> {
    const tx = await spendOf(u, 2);
    const txId = tx.id('hex');
    raw.set(txId, tx.toUint8Array());
    return { txId, rawTx: tx.toUint8Array(), efHex: tx.toHexEF(), tx };
  }
  /**
   * Held by ARC: SEEN_ON_NETWORK (accepted) or, before the node's time to SEEN has passed, a
   * status below it (pending). Never a refusal.
   */
  const held = expect.stringMatching(/^(accepted|pending)$/);
  /** The node's status of `txId` reaches SEEN_ON_NETWORK (after its time to SEEN). */
  const seenOnNetwork = (txId: string) =>
    eventually(async () => {
      const status = (await (await fetch(`${dev.node.url}/v1/tx/${txId}`)).json()) as { txStatus: string };
      return status.txStatus === 'SEEN_ON_NETWORK';
    });
  const take = () => {
    const u = utxos.shift();
    if (!u) throw new Error('spec ran out of UTXOs');
    return u;
  };

  beforeAll(async () => {
    dev = await startArcDevnet({ redis, prefix });
    utxos = await dev.fund(40, 1000);
  });
  afterAll(async () => {
    await dev.close();
    await cleanup();
  });

  it('a chain submitted in several batches reaches the node parents first: one request in flight, no child refused for an unknown input', async () => {
    // Nine transactions, each spending the previous one's output (a linked record's chain).
    const links = [await spendUtxo(take())];
    for (let i = 0; i < 8; i++) {
      const parent = links[links.length - 1]!.tx;
      const tx = nodeTestKit.transactionSpending(parent, 0, dev.fundingKey);
      tx.addOutput({
        satoshis: parent.outputs[0]!.satoshis! - 2,
        lockingScript: LockingScript.fromHex(dev.funding.lockingScriptHex),
      });
      await tx.sign();
      links.push({ txId: tx.id('hex'), rawTx: tx.toUint8Array(), efHex: tx.toHexEF(), tx });
    }
    // Extended Format, as the service broadcasts: ARC answers 460 to a raw child whose parent is
    // in the same request, and validates an EF one with the outputs it carries.
    const batcher = new ArcSubmitBatcher(dev.chain.arc, { maxBatch: 3, windowMs: 1 });
    const results = await Promise.all(
      links.map((t) => batcher.submit({ txId: t.txId, rawTx: Buffer.from(t.efHex, 'hex') })),
    );
    expect(results.map((r) => r.kind)).toEqual(links.map(() => held));
    expect(batcher.sent).toEqual([3, 3, 3]);
    for (const t of links) await seenOnNetwork(t.txId);
  });

  it('concurrent submissions go out as one POST /v1/txs; once mined, each proof is verified, stored and matches the node', async () => {
    const txs = await Promise.all(Array.from({ length: 6 }, () => spendUtxo(take())));
    for (const t of txs) {
      // every input verified by the sdk's interpreter against the output it spends
      const input = t.tx.inputs[0]!;
      const source = input.sourceTransaction!.outputs[input.sourceOutputIndex]!;
      const spend = new Spend({
        sourceTXID: input.sourceTXID ?? input.sourceTransaction!.id('hex'),
        sourceOutputIndex: input.sourceOutputIndex,
        sourceSatoshis: source.satoshis!,
        lockingScript: source.lockingScript,
        transactionVersion: t.tx.version,
        otherInputs: [],
        outputs: t.tx.outputs,
        inputIndex: 0,
        unlockingScript: input.unlockingScript!,
        inputSequence: input.sequence!,
        lockTime: t.tx.lockTime,
      });
      expect(spend.validate()).toBe(true);
    }
    const sentBefore = dev.chain.publisher.sent.length;
    const results = await Promise.all(txs.map((t) => dev.chain.publisher.submit({ txId: t.txId, rawTx: t.rawTx })));
    expect(results.map((r) => r.kind)).toEqual(txs.map(() => held));
    const sent = dev.chain.publisher.sent.slice(sentBefore);
    expect(sent).toEqual([6]); // one request for the six
    await dev.chain.store.watch(
      txs.map((t) => t.txId),
      new Date(),
    );

    // not mined yet: the pass keeps them waiting
    const waiting = await dev.confirmOnce(hooks);
    expect(waiting).toMatchObject({ polled: 6, proven: 0, waiting: 6 });
    const block = await dev.node.mineBlock();
    const pass = await dev.confirmOnce(hooks);
    expect(pass).toMatchObject({ proven: 6, refused: 0 });
    expect(await dev.chain.store.watchedCount()).toBe(0);

    const inclusions = await dev.chain.reader.inclusions(txs.map((t) => t.txId));
    for (const [i, inc] of inclusions.entries()) {
      const txId = txs[i]!.txId;
      expect(inc?.blockHash).toBe(block.hash);
      expect(verifyTscProof(inc!.proof!, txId)).toMatchObject({ valid: true });
      // the node says MINED in the same block, with a BUMP computing that block's Merkle root
      const status = (await (await fetch(`${dev.node.url}/v1/tx/${txId}`)).json()) as {
        txStatus: string;
        blockHash: string;
        merklePath: string;
      };
      expect(status).toMatchObject({ txStatus: 'MINED', blockHash: inc!.blockHash });
      expect(MerklePath.fromHex(status.merklePath).computeRoot(txId)).toBe(parseHeader(inc!.proof!.target).merkleRoot);
    }
    // block reads come from what the service verified
    const stored = await dev.chain.blocks.blockByHash(block.hash);
    expect(stored).toMatchObject({ hash: block.hash, height: block.height, txCount: 6 });
    expect(await dev.chain.blocks.blockTxIds(block.hash, 0, 100)).toEqual(
      expect.arrayContaining(txs.map((t) => t.txId)),
    );
    expect((await dev.chain.blocks.blockByHeight(block.height))?.hash).toBe(block.hash);
    expect(await dev.chain.blocks.tip()).toMatchObject({ hash: block.hash, height: block.height });
    expect(await dev.chain.reader.tipHeight()).toBe(block.height);
  });

  it('a corrupted BUMP is refused (nothing stored) and the transaction is proven once the node serves a good one', async () => {
    const t = await spendUtxo(take());
    await dev.chain.publisher.submit({ txId: t.txId, rawTx: Buffer.from(t.efHex, 'hex') });
    await dev.chain.store.watch([t.txId], new Date());
    await dev.node.mineBlock();
    dev.node.faults.corruptBump = true;
    try {
      const refused = await dev.confirmOnce(hooks);
      expect(refused).toMatchObject({ proven: 0, refusedProofs: 1 });
      expect(await dev.chain.reader.inclusions([t.txId])).toEqual([null]);
      expect(await dev.chain.store.watched(10)).toContain(t.txId);
    } finally {
      dev.node.faults.corruptBump = false;
    }
    expect(await dev.confirmOnce(hooks)).toMatchObject({ proven: 1 });
    expect(verifyTscProof((await dev.chain.reader.inclusions([t.txId]))[0]!.proof!, t.txId)).toMatchObject({
      valid: true,
    });
  });

  it('ARC down (503): submissions throw a retryable error and nothing is lost; after recovery the same bytes are accepted', async () => {
    const t = await spendUtxo(take());
    dev.node.faults.arcStatus = 503;
    try {
      await expect(dev.chain.publisher.submit({ txId: t.txId, rawTx: t.rawTx })).rejects.toBeInstanceOf(
        ArcTransientError,
      );
      // polling while ARC is down changes nothing
      await dev.chain.store.watch([t.txId], new Date());
      expect(await dev.confirmOnce(hooks)).toMatchObject({ proven: 0, errors: 1, refused: 0 });
    } finally {
      dev.node.faults.arcStatus = undefined;
    }
    await expect(dev.chain.publisher.submit({ txId: t.txId, rawTx: t.rawTx })).resolves.toMatchObject({
      kind: held,
    });
    await dev.node.mineBlock();
    expect(await dev.confirmOnce(hooks)).toMatchObject({ proven: 1 });
  });

  it('a rejected transaction carries ARC’s code; a transaction ARC does not know is re-broadcast with the same bytes', async () => {
    const bad = await spendUtxo(take());
    dev.node.faults.rejectAll = { code: 461, detail: 'script failed' };
    try {
      const r = await dev.chain.publisher.submit({ txId: bad.txId, rawTx: bad.rawTx });
      expect(r).toMatchObject({ kind: 'refused', code: 461 });
    } finally {
      dev.node.faults.rejectAll = undefined;
    }

    // Published "somewhere" but unknown to ARC: the pass sends the same bytes again.
    const lost = await spendUtxo(take());
    await dev.chain.store.watch([lost.txId], new Date());
    expect((await fetch(`${dev.node.url}/v1/tx/${lost.txId}`)).status).toBe(404);
    expect(await dev.confirmOnce(hooks)).toMatchObject({ rebroadcast: 1 });
    await seenOnNetwork(lost.txId);

    // A watched tx ARC reports refused (a double spend of a mined input) fails through onRefused.
    const u = take();
    const first = await spendUtxo(u);
    await dev.chain.publisher.submit({ txId: first.txId, rawTx: first.rawTx });
    const rival = await spendOf(u, 3);
    const answer = await dev.chain.publisher.submit({ txId: rival.id('hex'), rawTx: rival.toUint8Array() });
    expect(answer.kind).toBe('refused');
    expect([466, 'DOUBLE_SPEND_ATTEMPTED']).toContain(answer.kind === 'refused' && answer.code);
    await dev.node.mineBlock();
    await dev.chain.store.watch([rival.id('hex'), first.txId], new Date());
    await dev.confirmOnce(hooks);
    expect(refusals.map((r) => r.txId)).toContain(rival.id('hex'));
    expect(await dev.chain.store.watched(100)).not.toContain(rival.id('hex'));
    const refusal = refusals.find((r) => r.txId === rival.id('hex'))!;
    expect(['REJECTED', 'DOUBLE_SPEND_ATTEMPTED']).toContain(refusalCode(refusal));
    expect((await dev.chain.store.rejections())[refusalCode(refusal)]).toBeGreaterThanOrEqual(1);
  });

  it('a reorg of the last block: the proof is dropped, the tx waits again and is proven in the new block; a block event is published', async () => {
    const subscriber = testRedisClient({ maxRetriesPerRequest: null });
    const reading = createArcChain({ redis, subscriber, prefix, config: dev.chainConfig });
    const events = reading.blocks.blockEvents();
    try {
      const t = await spendUtxo(take());
      await dev.chain.publisher.submit({ txId: t.txId, rawTx: t.rawTx });
      await dev.chain.store.watch([t.txId], new Date());
      const mined = await dev.node.mineBlock();
      const next = events.next();
      await new Promise((r) => setTimeout(r, 50)); // the SUBSCRIBE reaches Redis
      expect(await dev.confirmOnce(hooks)).toMatchObject({ proven: 1 });
      const first = await next;
      expect(first.value).toMatchObject({ hash: mined.hash, height: mined.height });

      const reorg = await dev.node.reorgLastBlock();
      expect(reorg.oldHash).toBe(mined.hash);
      const pass = await dev.confirmOnce(hooks);
      expect(pass.reorged).toContain(t.txId);
      await eventually(
        async () =>
          (await dev.chain.reader.inclusions([t.txId]))[0]?.blockHash === reorg.newHash
            ? true
            : (await dev.confirmOnce(hooks), false),
        5000,
        50,
      );
      const [inc] = await dev.chain.reader.inclusions([t.txId]);
      expect(inc).toMatchObject({ blockHash: reorg.newHash, blockHeight: reorg.height });
      expect(verifyTscProof(inc!.proof!, t.txId)).toMatchObject({ valid: true });
      expect(await dev.chain.blocks.blockByHash(reorg.oldHash)).toBeNull();
      expect((await dev.chain.blocks.blockByHeight(reorg.height))?.hash).toBe(reorg.newHash);
      await expect(publishBlockEvent(redis, prefix, dev.chain.store, reorg.newHash)).resolves.toMatchObject({
        hash: reorg.newHash,
      });
    } finally {
      await events.return?.();
      await reading.close();
      subscriber.disconnect();
    }
  });

  it('the confirmation worker (BullMQ job scheduler) proves published transactions on its own, one run at a time', async () => {
    const bull = testBullRedis();
    const a = await dev.startConfirmations(bull, hooks);
    const b = await dev.startConfirmations(bull, hooks); // a second worker: BullMQ + the lock keep runs single
    try {
      const t = await spendUtxo(take());
      await dev.chain.publisher.submit({ txId: t.txId, rawTx: t.rawTx });
      await dev.chain.store.watch([t.txId], new Date());
      await dev.node.mineBlock();
      await eventually(async () => (await dev.chain.reader.inclusions([t.txId]))[0] !== null, 10_000, 50);
      const [held, other] = await Promise.all([a.runOnce(), b.runOnce()]);
      expect([held, other].filter((r) => r === null).length).toBeGreaterThanOrEqual(1);
    } finally {
      await a.close();
      await b.close();
      await bull.quit();
    }
  });
});
