/**
 * The wallet's production wiring (`createWalletServices`, what the worker's wallet role and
 * `wallet split` run) against the real devnet node over HTTP: the coinbase scan imports matured
 * coinbases paying the funding address, the splitter cuts them into denomination UTXOs through the
 * ARC client (the node checks every signature and fee), and a record funded by a pool UTXO with
 * change back to the funding key is accepted by the node, then mined.
 */
import { ArcClient } from '@proofline/chain-arc';
import { BsvTransactionBuilder, deriveChainKeys } from '@proofline/chain-bsv';
import { COINBASE_MATURITY, startDevnetNode } from '@proofline/devnet';
import type { DevnetNode } from '@proofline/devnet';
import { loadConfig } from '@proofline/shared-config';
import { withResolvedPartitions } from '@proofline/shared-redis';
import { testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { DEVNET_COINBASE_MATURITY, createWalletServices } from './wallet-services';
import { walletUpkeep } from './wallet-upkeep';

describe('wallet services against the devnet node (real HTTP, real Redis)', () => {
  const prefix = uniquePrefix('wsvc');
  const { redis, cleanup } = testRedis(prefix);
  let node: DevnetNode;

  afterAll(async () => {
    await node?.close();
    await cleanup();
  });

  it('scan → split through ARC → a record funded by a pool UTXO is accepted and mined; change goes back to the pool', async () => {
    expect(DEVNET_COINBASE_MATURITY).toBeGreaterThanOrEqual(COINBASE_MATURITY);
    // Sharded as a service on this Redis would be (REDIS_PARTITIONS unset).
    const base = await withResolvedPartitions(
      redis,
      loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' }),
    );
    const probe = createWalletServices(redis, base);
    node = await startDevnetNode({
      redis,
      prefix,
      port: 0,
      coinbaseLockingScriptHex: probe.wallet.identity.lockingScriptHex,
      blockIntervalMs: 0,
      feeSatoshisPerKb: 1,
    });
    const config = await withResolvedPartitions(
      redis,
      loadConfig({
        REDIS_URL: testRedisUrl(),
        REDIS_PREFIX: prefix,
        LOG_LEVEL: 'silent',
        ARC_URL: node.url,
        HEADERS_URL: node.url,
        POOL_UTXO_SATS: '1000',
        POOL_LOW_WATER: '10',
        POOL_TARGET: '25',
      }),
    );
    const services = createWalletServices(redis, config);
    const { pool } = services.wallet;

    const report = await walletUpkeep(await services.upkeepDeps(), services.lowWater);
    expect(report.scan?.imported.length).toBeGreaterThanOrEqual(1);
    expect(report.split).toMatchObject({ status: 'split', outputs: 25, outcome: 'accepted' });
    expect(await pool.denominatedCount(1000)).toBe(25);
    // The fee the split paid follows the node's policy (1 sat/kB, doubled).
    expect(services.fees.current()).toBe(2);

    // A record built as the write path builds it: one reserved pool UTXO, change to the funding key.
    const reserved = await pool.reserve({ owner: 'writer', minSatoshis: 1000 });
    if (reserved.status !== 'reserved') throw new Error('pool should hold denomination UTXOs');
    const builder = new BsvTransactionBuilder({ keys: deriveChainKeys(config.wallet.seed) });
    const tx = builder.build({
      kind: 'create',
      data: new Uint8Array(Buffer.from('funded by the pool')),
      contentType: 'text/plain',
      funding: reserved.utxos,
      satoshisPerKilobyte: services.fees.current(),
    });
    expect(tx.change?.satoshis).toBe(1000 - 1 - tx.fee);
    expect(await pool.commit({ txId: tx.txId, owner: 'writer', inputs: reserved.utxos, outputs: [tx.change!] })).toBe(
      'OK',
    );
    const arc = new ArcClient({ url: node.url, timeoutMs: 10_000 });
    expect(await arc.submit({ txId: tx.txId, hex: Buffer.from(tx.rawTx).toString('hex') })).toMatchObject({
      kind: 'accepted',
    });
    // What the publisher does on ARC's acceptance: the change becomes spendable.
    expect(await pool.confirm(tx.txId)).toBe(1);
    expect((await pool.freeOutpoints()).get(`${tx.txId}:${tx.change!.vout}`)).toBe(tx.change!.satoshis);

    const mined = await node.mineBlock();
    expect(mined.txIds).toContain(tx.txId);
    expect(await arc.status(tx.txId)).toMatchObject({ kind: 'accepted', status: 'MINED', mined: expect.anything() });
  });
});
