import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { LockingScript, Transaction, UnlockingScript } from '@bsv/sdk';
import { DEV_CHAIN_SEED, deriveChainKeys } from '@proofline/chain-bsv';
import { DEVNET_WALLET_SEED } from '@proofline/shared-config';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { CoinbaseScanner, fundingOutputsOf, httpCoinbaseSource } from './coinbase-scan';
import { fundingIdentity } from './funding-address';
import { FundingPool } from './funding-pool';
import { effectiveFeeRate } from './fee-rate';
import { createFundingWallet } from './funding-wallet';
import { parseUtxoSpec } from './funding-pool';
import { inputsReleasable } from './release-rules';

const keys = deriveChainKeys(DEVNET_WALLET_SEED);
const funding = fundingIdentity(keys, 'devnet');
const minerScript = `76a914${Buffer.from(keys.miner.pubKeyHash).toString('hex')}88ac`;

/** A real coinbase: the null outpoint, a BIP34-ish height push, outputs as given. */
function coinbaseHex(height: number, outputs: { satoshis: number; scriptHex: string }[]): string {
  const tx = new Transaction(
    1,
    [
      {
        sourceTXID: '0'.repeat(64),
        sourceOutputIndex: 0xffffffff,
        sequence: 0xffffffff,
        unlockingScript: UnlockingScript.fromHex(`04${height.toString(16).padStart(8, '0')}`),
      },
    ],
    outputs.map((o) => ({ satoshis: o.satoshis, lockingScript: LockingScript.fromHex(o.scriptHex) })),
    0,
  );
  return tx.toHex();
}

describe('funding identity and import', () => {
  it('the config devnet seed is chain-bsv’s, and the funding address is the funding key’s P2PKH', () => {
    expect(DEVNET_WALLET_SEED).toBe(DEV_CHAIN_SEED);
    expect(funding.lockingScriptHex).toBe(`76a914${Buffer.from(keys.funding.pubKeyHash).toString('hex')}88ac`);
    expect(funding.address).toBe(keys.funding.privateKey.toAddress('testnet'));
    expect(funding.address).toMatch(/^[mn]/);
    expect(fundingIdentity(keys, 'mainnet').address).toMatch(/^1/);
  });

  it('createFundingWallet derives the identity from the configuration; the fee rate is 2x policy above the floor', () => {
    const conn = new Redis({ lazyConnect: true });
    const { identity, pool } = createFundingWallet(conn, {
      redisPrefix: 'x',
      redisPartitions: 1,
      network: 'devnet',
      wallet: {
        seed: DEVNET_WALLET_SEED,
        utxoSatoshis: 1000,
        lowWater: 1,
        target: 2,
        feeFloorSatsPerKb: 1,
        feePolicyMaxAgeMs: 3_600_000,
      },
    });
    expect(identity).toEqual(funding);
    expect(pool.keys.free).toBe('x:{rec}:wallet:free');
    conn.disconnect();
    expect(effectiveFeeRate({ satoshis: 1, bytes: 1000 }, 1)).toBe(2);
    expect(effectiveFeeRate({ satoshis: 50, bytes: 1000 }, 1)).toBe(100);
    expect(effectiveFeeRate({ satoshis: 1, bytes: 1000 }, 10)).toBe(10);
    expect(effectiveFeeRate(null, 5)).toBe(5);
  });

  it('parses TXID:VOUT:SATS and refuses anything else', () => {
    expect(parseUtxoSpec(`${'AB'.repeat(32)}:3:125000`)).toEqual({ txId: 'ab'.repeat(32), vout: 3, satoshis: 125000 });
    for (const bad of [
      '',
      'abc:0:1',
      `${'a'.repeat(64)}:0`,
      `${'a'.repeat(64)}:0:0`,
      `${'a'.repeat(64)}:-1:5`,
      `${'a'.repeat(64)}:0:1.5`,
    ]) {
      expect(() => parseUtxoSpec(bad)).toThrow(TypeError);
    }
  });

  it('release rules: only a rejection proving the transaction can never be mined, before the network saw it, frees inputs', () => {
    for (const code of ['461', '463', '464']) expect(inputsReleasable({ code, reachedNetwork: false })).toBe(true);
    expect(inputsReleasable({ code: '461', reachedNetwork: true })).toBe(false);
    for (const code of ['400', '460', '465', '468', '473', '474']) {
      expect(inputsReleasable({ code, reachedNetwork: false })).toBe(false);
    }
    for (const code of ['462', '466', '467', '471', '472', '475', 'DOUBLE_SPEND_ATTEMPTED', 'REJECTED', '500', '429']) {
      expect(inputsReleasable({ code, reachedNetwork: false })).toBe(false);
    }
  });

  it('reads only the outputs locked by the funding script, and refuses a non-coinbase', () => {
    const hex = coinbaseHex(7, [
      { satoshis: 100, scriptHex: minerScript },
      { satoshis: 5000, scriptHex: funding.lockingScriptHex },
    ]);
    const txId = Transaction.fromHex(hex).id('hex');
    expect(fundingOutputsOf({ height: 7, blockHash: 'x', hex }, funding.lockingScriptHex)).toEqual([
      { txId, vout: 1, satoshis: 5000 },
    ]);
    const spend = new Transaction(
      1,
      [
        {
          sourceTXID: txId,
          sourceOutputIndex: 1,
          sequence: 0xffffffff,
          unlockingScript: UnlockingScript.fromHex('00'),
        },
      ],
      [],
      0,
    );
    expect(() => fundingOutputsOf({ height: 8, blockHash: 'x', hex: spend.toHex() }, funding.lockingScriptHex)).toThrow(
      /not a coinbase/,
    );
  });
});

describe('CoinbaseScanner over HTTP (real Redis, a real HTTP server with the devnet endpoints)', () => {
  const prefix = uniquePrefix('scan');
  const { redis, cleanup } = testRedis(prefix);
  const chain: string[] = [];
  let requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': status === 200 ? 'application/json' : 'application/problem+json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/chain/info')
      return json(200, { chain: 'devnet', blocks: chain.length - 1, bestblockhash: 'b'.repeat(64) });
    const m = /^\/block\/height\/(\d+)\/coinbase$/.exec(req.url ?? '');
    const hex = m ? chain[Number(m[1])] : undefined;
    if (!m || hex === undefined) return json(404, { status: 404, title: 'Not Found' });
    return json(200, {
      height: Number(m[1]),
      blockHash: 'c'.repeat(64),
      txid: Transaction.fromHex(hex).id('hex'),
      hex,
    });
  });
  let baseUrl = '';

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await cleanup();
  });

  it('imports matured coinbases paying the funding address once, moving its cursor forward', async () => {
    const pool = new FundingPool(redis, { prefix, address: funding.address });
    const scanner = new CoinbaseScanner({
      pool,
      source: httpCoinbaseSource({ baseUrl }),
      fundingScriptHex: funding.lockingScriptHex,
      maturity: 3,
    });
    for (let h = 0; h < 5; h++)
      chain.push(
        coinbaseHex(h, [{ satoshis: 1_000_000 + h, scriptHex: h === 1 ? minerScript : funding.lockingScriptHex }]),
      );
    // Tip 4, maturity 3: heights 0..2 are mature; height 1 pays someone else.
    const first = await scanner.scan();
    expect(first.scannedTo).toBe(2);
    expect(first.imported.map((u) => u.satoshis)).toEqual([1_000_000, 1_000_002]);
    expect(await pool.status()).toMatchObject({ free: { count: 2, satoshis: 2_000_002 } });

    requests = [];
    expect(await scanner.scan()).toEqual({ scannedTo: 2, imported: [] });
    expect(requests).toEqual(['/chain/info']);

    chain.push(coinbaseHex(5, [{ satoshis: 7, scriptHex: funding.lockingScriptHex }]));
    const next = await scanner.scan();
    expect(next.scannedTo).toBe(3);
    expect(next.imported.map((u) => u.satoshis)).toEqual([1_000_003]);
    // A cursor moved back by hand does not import twice (add skips known outpoints).
    await redis.set(pool.keys.scanHeight, '-1');
    expect((await scanner.scan()).imported).toEqual([]);
    expect(await pool.status()).toMatchObject({ free: { count: 3, satoshis: 3_000_005 } });
  });
});
