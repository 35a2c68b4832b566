import { Transaction } from '@bsv/sdk';
import { CoinbaseScanner, DEVNET_COINBASE_MATURITY, httpCoinbaseSource } from '@proofline/chain-wallet';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { startArcDevnet } from './arc-devnet';
import type { ArcDevnet } from './arc-devnet';

// `fund()` spends a matured coinbase outside the pool; a worker on the same devnet imports matured
// coinbases paying the funding key into the pool (its upkeep's CoinbaseScanner). The spent one
// must not be imported: a write funded by it is refused for good (ARC 462, already spent in a
// block), which the slot-migration spec met now and then.

describe('fund() beside the coinbase scanner of a worker on the same devnet', () => {
  const prefix = uniquePrefix('fundscan');
  const { redis, cleanup } = testRedis(prefix);
  let dev: ArcDevnet;
  beforeAll(async () => {
    dev = await startArcDevnet({ redis, prefix });
  });
  afterAll(async () => {
    await dev.close();
    await cleanup();
  });

  it('the coinbase fund() spent never reaches the pool; the coinbases after it do', async () => {
    const utxos = await dev.fund(5, 1000);
    const spentCoinbase = Transaction.fromHex(dev.splitHex(utxos[0]!.txId)).inputs[0]!.sourceTXID!;
    const scanner = new CoinbaseScanner({
      pool: dev.pool,
      source: httpCoinbaseSource({ baseUrl: dev.node.url }),
      fundingScriptHex: dev.funding.lockingScriptHex,
      maturity: DEVNET_COINBASE_MATURITY,
    });
    for (let i = 0; i < 3; i += 1) await dev.node.mineBlock();
    const { imported } = await scanner.scan();
    expect(imported.length).toBeGreaterThan(0);
    expect(imported.map((u) => u.txId)).not.toContain(spentCoinbase);
    const free = await dev.pool.status();
    expect(free.free.count).toBe(utxos.length + imported.length);
  });
});
