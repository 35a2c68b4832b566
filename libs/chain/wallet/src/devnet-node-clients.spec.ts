import { COINBASE_MATURITY, nodeTestKit } from '@proofline/devnet';
import type { DevnetNode } from '@proofline/devnet';
import { CoinbaseScanner, FundingPool, fundingIdentity, httpCoinbaseSource } from './index';
import { deriveChainKeys } from '@proofline/chain-bsv';
import { verifyTscProof } from '@proofline/chain-domain';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import {
  ArcAuthError,
  ArcChainPublisher,
  ArcClient,
  ArcProofStore,
  ArcTransientError,
  WocHeadersClient,
  trackConfirmations,
} from '@proofline/chain-arc';

// The devnet node (libs/devnet, startDevnetNode) driven by the existing clients: chain-arc's
// ARC and headers clients and this lib's coinbase scanner (so it lives here: chain-arc cannot
// import chain-wallet).
const { otherKey, coinbaseTx, spend, split, startTestNode } = nodeTestKit;

// The root jest run (all projects) ignores the preset's testTimeout: set it here, the machine is shared.
jest.setTimeout(30_000);

describe('the existing ARC, headers and wallet clients against the devnet node (real HTTP)', () => {
  const prefix = uniquePrefix('node-clients');
  const { redis, cleanup } = testRedis(prefix);
  let node: DevnetNode;
  let client: ArcClient;
  let headers: WocHeadersClient;

  beforeAll(async () => {
    node = await startTestNode(redis, prefix, { apiKey: 'node-api-key' });
    client = new ArcClient({ url: node.url, apiKey: 'node-api-key', timeoutMs: 10_000, maxTimeoutSeconds: 5 });
    headers = new WocHeadersClient({ url: node.url, timeoutMs: 5000, maxRps: Infinity });
  });
  afterAll(async () => {
    await node.close();
    await cleanup();
  });

  it('ArcClient: policy, submit (accepted, re-submit, rejected), submitMany, status (mined, not-found); auth errors', async () => {
    await expect(client.policy()).resolves.toEqual({
      satoshisPerKb: 1,
      maxTxSizePolicy: 10_000_000_000,
      maxScriptSizePolicy: 500_000_000,
      standardFormatSupported: true,
    });
    await expect(new ArcClient({ url: node.url, timeoutMs: 5000 }).policy()).rejects.toBeInstanceOf(ArcAuthError);

    const coins = await split(await coinbaseTx(node.url, 0), 6);
    await expect(client.submit({ txId: coins.id('hex'), hex: coins.toHexEF() })).resolves.toMatchObject({
      kind: 'accepted',
      status: 'SEEN_ON_NETWORK',
    });
    await expect(client.submit({ txId: coins.id('hex'), hex: coins.toHex() })).resolves.toMatchObject({
      kind: 'accepted',
    });
    const bad = await spend(coins, 0, [{ satoshis: 99_000 }], otherKey);
    await expect(client.submit({ txId: bad.id('hex'), hex: bad.toHexEF() })).resolves.toMatchObject({
      kind: 'refused',
      code: 461,
    });

    const a = await spend(coins, 1, [{ satoshis: 99_000 }]);
    const b = await spend(coins, 2, [{ satoshis: 99_000 }]);
    const bSpend = await spend(coins, 2, [{ satoshis: 98_000 }]);
    const results = await client.submitMany([
      { txId: bad.id('hex'), hex: bad.toHexEF() },
      { txId: a.id('hex'), hex: a.toHexEF() },
      { txId: b.id('hex'), hex: b.toHexEF() },
    ]);
    expect(results.map((r) => (r instanceof ArcTransientError ? r.reason : r.kind))).toEqual([
      'refused',
      'accepted',
      'accepted',
    ]);
    await expect(client.submit({ txId: bSpend.id('hex'), hex: bSpend.toHexEF() })).resolves.toMatchObject({
      kind: 'refused',
      code: 'DOUBLE_SPEND_ATTEMPTED',
      competingTxs: [b.id('hex')],
    });

    // The publisher port on the client.
    const publisher = new ArcChainPublisher(client);
    const c = await spend(coins, 3, [{ satoshis: 99_000 }]);
    await expect(publisher.submit({ txId: c.id('hex'), rawTx: Uint8Array.from(c.toEF()) })).resolves.toMatchObject({
      kind: 'accepted',
    });

    const block = await node.mineBlock();
    const mined = await client.status(a.id('hex'));
    expect(mined).toMatchObject({ kind: 'accepted', mined: { blockHash: block.hash, blockHeight: block.height } });
    await expect(client.status('ab'.repeat(32))).resolves.toEqual({ kind: 'not-found', txId: 'ab'.repeat(32) });
    node.faults.arcStatus = 503;
    await expect(client.status(a.id('hex'))).rejects.toMatchObject({ reason: 'server-error' });
    node.faults.arcStatus = undefined;
  });

  it('WocHeadersClient and the proof tracker verify the node’s headers and BUMPs; a corrupted BUMP is refused; a reorg is seen', async () => {
    const tip = await headers.tip();
    const info = await headers.headerByHash(tip.hash);
    expect(info).toMatchObject({ hash: tip.hash, height: tip.height, confirmations: 1 });
    await expect(headers.headerByHash('cd'.repeat(32))).resolves.toBeNull();

    const coins = await split(await coinbaseTx(node.url, 1), 3);
    const tx = await spend(coins, 0, [{ satoshis: 99_000 }]);
    await client.submitMany([
      { txId: coins.id('hex'), hex: coins.toHexEF() },
      { txId: tx.id('hex'), hex: tx.toHexEF() },
    ]);
    await node.mineBlock();
    const store = new ArcProofStore(redis, prefix);

    node.faults.corruptBump = true;
    const refused = await trackConfirmations({ client, headers, store, txIds: [tx.id('hex')] });
    expect(refused.proven).toEqual([]);
    expect(refused.failed).toHaveLength(1);
    expect(await store.inclusions([tx.id('hex')])).toEqual([null]);
    node.faults.corruptBump = false;

    const ok = await trackConfirmations({ client, headers, store, txIds: [tx.id('hex'), coins.id('hex')] });
    expect(ok.proven.slice().sort()).toEqual([tx.id('hex'), coins.id('hex')].sort());
    const [inc] = await store.inclusions([tx.id('hex')]);
    expect(verifyTscProof(inc!.proof!, tx.id('hex'))).toMatchObject({ valid: true });

    const r = await node.reorgLastBlock();
    // Membership of a kept header is as of the client's last tip (2 s at most): a tip asked for
    // after the reorg sees the old block off the main chain, as reconcile does.
    await headers.tip();
    expect((await headers.headerByHash(r.oldHash))?.confirmations).toBe(-1);
    const reconciled = await store.reconcile(headers, 3);
    expect(reconciled.dropped.map((d) => d.blockHash)).toEqual([r.oldHash]);
    expect(reconciled.dropped[0]!.txIds.slice().sort()).toEqual([tx.id('hex'), coins.id('hex')].sort());
    const again = await trackConfirmations({ client, headers, store, txIds: [tx.id('hex')] });
    expect(again.proven).toEqual([tx.id('hex')]);
    const [moved] = await store.inclusions([tx.id('hex')]);
    expect(moved?.blockHash).toBe(r.newHash);
  });

  it('CoinbaseScanner + httpCoinbaseSource import every matured coinbase paying the funding script, and a spend of one is accepted', async () => {
    const seed = 'ab'.repeat(32);
    const funding = fundingIdentity(deriveChainKeys(seed), 'devnet');
    const p = uniquePrefix('node-wallet');
    const { redis: r2, cleanup: c2 } = testRedis(p);
    const walletNode = await startTestNode(r2, p, { coinbaseLockingScriptHex: funding.lockingScriptHex });
    try {
      await walletNode.mineBlock();
      await walletNode.mineBlock(); // tip 3: coinbases 0..2 are mature (maturity 2)
      const pool = new FundingPool(r2, { prefix: p, address: funding.address });
      const scanner = new CoinbaseScanner({
        pool,
        source: httpCoinbaseSource({ baseUrl: walletNode.url }),
        fundingScriptHex: funding.lockingScriptHex,
        maturity: COINBASE_MATURITY,
      });
      const report = await scanner.scan();
      expect(report.scannedTo).toBe(2);
      expect(report.imported).toHaveLength(3);
      expect(report.imported.every((u) => u.vout === 0 && u.satoshis === 50 * 100_000_000)).toBe(true);
      expect((await scanner.scan()).imported).toHaveLength(0); // idempotent
      const status = await pool.status();
      expect(status.balance).toBe(3 * 50 * 100_000_000);
      expect(status.address).toBe(funding.address);
      // The imported coinbase is spendable by the funding key through ARC.
      const utxo = report.imported[0]!;
      const fundingKey = deriveChainKeys(seed).funding.privateKey;
      const parent = await coinbaseTx(walletNode.url, 0);
      expect(parent.id('hex')).toBe(utxo.txId);
      const use = await spend(parent, 0, [{ satoshis: utxo.satoshis - 1000 }], fundingKey);
      const walletClient = new ArcClient({ url: walletNode.url, timeoutMs: 5000 });
      await expect(walletClient.submit({ txId: use.id('hex'), hex: use.toHexEF() })).resolves.toMatchObject({
        kind: 'accepted',
      });
    } finally {
      await walletNode.close();
      await c2();
    }
  });
});
