// Conformance: the devnet node driven by @bsv/sdk's own ARC broadcaster and WhatsOnChain chain
// tracker, unchanged (real HTTP, real Redis). The sdk must read every answer of the node as it
// reads ARC's and WhatsOnChain's: success for accepted and mined transactions, its failure shape
// (`code` = the HTTP status, `description` = the problem's `detail`, `txid`, `more` = the body)
// for a 4xx problem, and a BUMP the tracker verifies against the node's headers.
import { ARC, MerklePath, PrivateKey, WhatsOnChain } from '@bsv/sdk';
import type { BroadcastFailure, BroadcastResponse, Transaction } from '@bsv/sdk';
import type { DevnetNode } from '@proofline/devnet';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import {
  CONFORMANCE_API_KEY,
  arcCall,
  coinbaseAt,
  rewritingHttpClient,
  sdkSpend,
  startConformanceNode,
} from './conformance-kit';

jest.setTimeout(30_000);

describe("conformance: @bsv/sdk's ARC broadcaster and WhatsOnChain tracker against the devnet node", () => {
  const prefix = uniquePrefix('sdkconf');
  const { redis, cleanup } = testRedis(prefix);
  let node: DevnetNode;
  let arc: ARC;
  /** A mempool transaction of the sdk's, split into outputs the other cases spend. */
  let coins: Transaction;
  let nextVout = 0;
  const coin = () => nextVout++;

  beforeAll(async () => {
    node = await startConformanceNode(redis, prefix);
    arc = new ARC(node.url, { apiKey: CONFORMANCE_API_KEY });
    coins = await sdkSpend(await coinbaseAt(node, 0), 0, { outputs: 12, each: 1_000_000 });
    expect(await coins.broadcast(arc)).toEqual({
      status: 'success',
      txid: coins.id('hex'),
      message: 'SEEN_ON_NETWORK ',
    });
  });
  afterAll(async () => {
    await node.close();
    await cleanup();
  });

  it('broadcasts an sdk-built EF transaction: success with its txid; a re-broadcast answers the stored status', async () => {
    const tx = await sdkSpend(coins, coin());
    const first = (await tx.broadcast(arc)) as BroadcastResponse;
    expect(first).toEqual({ status: 'success', txid: tx.id('hex'), message: 'SEEN_ON_NETWORK ' });
    expect(await tx.broadcast(arc)).toEqual(first);
    // The sdk has no status call: read it as ARC's GET /v1/tx/{txid} gives it.
    const status = await arcCall(node, `/v1/tx/${tx.id('hex')}`);
    expect(status).toMatchObject({ status: 200, body: { txid: tx.id('hex'), txStatus: 'SEEN_ON_NETWORK' } });
  });

  it('mines it; the BUMP from GET /v1/tx verifies with MerklePath.verify and tx.verify through the sdk WhatsOnChain tracker on the node', async () => {
    const tx = await sdkSpend(coins, coin());
    expect(await tx.broadcast(arc)).toMatchObject({ status: 'success', txid: tx.id('hex') });
    const block = await node.mineBlock();
    expect(block.txIds).toContain(tx.id('hex'));

    const answer = await arcCall(node, `/v1/tx/${tx.id('hex')}`);
    const body = answer.body as { txStatus: string; blockHash: string; blockHeight: number; merklePath: string };
    expect(body).toMatchObject({ txStatus: 'MINED', blockHash: block.hash, blockHeight: block.height });
    const path = MerklePath.fromHex(body.merklePath);
    expect(path.blockHeight).toBe(block.height);

    const { client, seen } = rewritingHttpClient(node.url);
    const tracker = new WhatsOnChain('main', { httpClient: client });
    expect(await path.verify(tx.id('hex'), tracker)).toBe(true);
    expect(seen).toContain(`${node.url}/block/${block.height}/header`);
    tx.merklePath = path;
    expect(await tx.verify(tracker)).toBe(true);
    expect(await tracker.currentHeight()).toBe(block.height);

    // The tracker says no to a wrong root and to a height the node has no block at (404).
    expect(await tracker.isValidRootForHeight('00'.repeat(32), block.height)).toBe(false);
    expect(await tracker.isValidRootForHeight(path.computeRoot(tx.id('hex')), block.height + 50)).toBe(false);
    // A BUMP of another block's height does not verify.
    const moved = MerklePath.fromHex(body.merklePath);
    moved.blockHeight = block.height - 1;
    expect(await moved.verify(tx.id('hex'), tracker)).toBe(false);

    // A re-broadcast of a mined transaction is still a success for the sdk.
    expect(await tx.broadcast(arc)).toEqual({ status: 'success', txid: tx.id('hex'), message: 'MINED ' });
  });

  it("verifies the coinbase's own BUMP too (index 0: the sdk asks the tracker's currentHeight, /block/headers)", async () => {
    const tip = await node.mineBlock();
    const coinbase = await coinbaseAt(node, tip.height);
    const answer = await arcCall(node, `/v1/tx/${coinbase.id('hex')}`);
    const { client, seen } = rewritingHttpClient(node.url);
    const tracker = new WhatsOnChain('main', { httpClient: client });
    const path = MerklePath.fromHex((answer.body as { merklePath: string }).merklePath);
    expect(await path.verify(coinbase.id('hex'), tracker)).toBe(true);
    expect(seen).toContain(`${node.url}/block/headers`);
  });

  it('a bad transaction gets the sdk failure shape from the 4xx problem: code, txid, description = detail, more = the body', async () => {
    const cases: { tx: Transaction; code: string }[] = [
      // 461: signed by a key the output does not name.
      { tx: await sdkSpend(coins, coin(), { signer: PrivateKey.fromHex('44'.repeat(32)) }), code: '461' },
      // 465: no fee at all (the node asks 1 sat/kB).
      { tx: await sdkSpend(coins, coin(), { satsPerKb: 0 }), code: '465' },
    ];
    // 462: an output nobody ever made (the parent is the sdk's, never broadcast).
    const unknownParent = await sdkSpend(coins, coin());
    cases.push({ tx: await sdkSpend(unknownParent, 0), code: '462' });

    for (const { tx, code } of cases) {
      const result = (await tx.broadcast(arc)) as BroadcastFailure;
      const problem = result.more as { status: number; detail: string; txid: string; type: string; title: string };
      expect({ code, result }).toEqual({
        code,
        result: {
          status: 'error',
          code,
          txid: tx.id('hex'),
          description: problem.detail,
          more: expect.objectContaining({ status: Number(code), txid: tx.id('hex') }),
        },
      });
      expect(problem.type).toBe(`https://bitcoin-sv.github.io/arc/#/errors?id=_${code}`);
      expect(problem.detail.length).toBeGreaterThan(0);
    }
  });

  it('a double spend is the sdk failure DOUBLE_SPEND_ATTEMPTED with the competing txids', async () => {
    const vout = coin();
    const first = await sdkSpend(coins, vout);
    const second = await sdkSpend(coins, vout, { outputs: 2 });
    expect(await first.broadcast(arc)).toMatchObject({ status: 'success', txid: first.id('hex') });
    expect(await second.broadcast(arc)).toEqual({
      status: 'error',
      code: 'DOUBLE_SPEND_ATTEMPTED',
      txid: second.id('hex'),
      description: expect.stringMatching(/^DOUBLE_SPEND_ATTEMPTED/),
      more: { competingTxs: [first.id('hex')] },
    });
  });

  it('without the API key the sdk reads 401 as a failure with code "401"', async () => {
    const tx = await sdkSpend(coins, coin());
    const result = await tx.broadcast(new ARC(node.url));
    expect(result).toMatchObject({ status: 'error', code: '401' });
    expect((await arcCall(node, `/v1/tx/${tx.id('hex')}`)).status).toBe(404);
  });

  it('broadcastMany gets the bare array ARC answers: each entry carries its txid, successes and problems', async () => {
    const good = await sdkSpend(coins, coin());
    const bad = await sdkSpend(coins, coin(), { satsPerKb: 0 });
    const answers = (await arc.broadcastMany([good, bad])) as { txid: string; txStatus?: string; status: number }[];
    expect(Array.isArray(answers)).toBe(true);
    expect(answers).toEqual([
      expect.objectContaining({ txid: good.id('hex'), txStatus: 'SEEN_ON_NETWORK', status: 200 }),
      expect.objectContaining({ txid: bad.id('hex'), status: 465 }),
    ]);
  });
});
