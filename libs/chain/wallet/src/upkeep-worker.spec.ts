/**
 * The wallet upkeep job on real BullMQ and real Redis: two worker processes' worth of upkeep
 * workers share one job scheduler; an on-demand request runs upkeep once (sweeps an expired lease,
 * splits with the real split builder), and requests while one waits are coalesced by its job id.
 */
import { LockingScript, Spend, Transaction } from '@bsv/sdk';
import { Queue } from 'bullmq';
import { BsvSplitBuilder, deriveChainKeys } from '@proofline/chain-bsv';
import { DEVNET_WALLET_SEED, ManualClock } from '@proofline/shared-config';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { eventually, testBullRedis, testRedis, uniquePrefix } from '@proofline/shared-testing';
import { fundingIdentity } from './funding-address';
import { FundingPool } from './funding-pool';
import type { SubmitPort } from './ports';
import { Splitter } from './splitter';
import { CoinbaseScanner } from './coinbase-scan';
import {
  WALLET_UPKEEP_ON_DEMAND_ID,
  WALLET_UPKEEP_SCHEDULER_ID,
  WalletUpkeepRequester,
  startWalletUpkeepWorker,
} from './upkeep-worker';
import { walletUpkeep } from './wallet-upkeep';
import type { RunningWalletUpkeep } from './upkeep-worker';

describe('wallet upkeep worker (real BullMQ)', () => {
  const prefix = uniquePrefix('wupkeep');
  const { redis, cleanup } = testRedis(prefix);
  const bull = testBullRedis();
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const keys = deriveChainKeys(DEVNET_WALLET_SEED);
  const identity = fundingIdentity(keys, 'devnet');
  const pool = new FundingPool(redis, { prefix, address: identity.address, clock });
  const submitted: string[] = [];
  /** An ARC stand-in that accepts only splits whose every input the sdk's interpreter accepts. */
  const submit: SubmitPort = async (tx) => {
    const parsed = Transaction.fromHexEF(tx.efHex);
    parsed.inputs.forEach((input, inputIndex) => {
      const source = input.sourceTransaction!.outputs[input.sourceOutputIndex]!;
      const ok = new Spend({
        sourceTXID: input.sourceTXID ?? input.sourceTransaction!.id('hex'),
        sourceOutputIndex: input.sourceOutputIndex,
        sourceSatoshis: source.satoshis!,
        lockingScript: LockingScript.fromHex(identity.lockingScriptHex),
        transactionVersion: parsed.version,
        otherInputs: parsed.inputs.filter((_, j) => j !== inputIndex),
        outputs: parsed.outputs,
        inputIndex,
        unlockingScript: input.unlockingScript!,
        inputSequence: input.sequence ?? 0xffffffff,
        lockTime: parsed.lockTime,
      }).validate();
      if (!ok) throw new Error('bad signature');
    });
    submitted.push(tx.txId);
    return { kind: 'accepted', txId: tx.txId, status: 'SEEN_ON_NETWORK', mined: null };
  };
  const runs: number[] = [];
  const deps = async () => {
    runs.push(Date.now());
    return {
      pool,
      scanner: null,
      splitter: new Splitter({
        pool,
        builder: new BsvSplitBuilder({ keys, satoshisPerKilobyte: 10 }),
        submit,
        satoshisPerKilobyte: 10,
      }),
    };
  };
  const running: RunningWalletUpkeep[] = [];
  const requester = new WalletUpkeepRequester(bull, prefix);
  const queue = new Queue(QUEUES.walletUpkeep, { connection: bull, prefix: bullPrefix(prefix, QUEUES.walletUpkeep) });

  afterAll(async () => {
    for (const r of running) await r.close();
    await requester.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await bull.quit();
    await cleanup();
  });

  it('upkeep runs as a BullMQ job (one scheduler for two workers; on-demand requests): pool split with valid signatures, expired lease swept', async () => {
    await pool.add([
      { txId: 'a1'.repeat(32), vout: 0, satoshis: 100_000 },
      { txId: 'b2'.repeat(32), vout: 1, satoshis: 1000 },
    ]);
    const lowWater = { lowWater: 10, target: 30, satoshisEach: 1000 };
    // Two workers (as two worker processes would run), one scheduler (its first run starts at once).
    for (let i = 0; i < 2; i++)
      running.push(
        await startWalletUpkeepWorker({ connection: bull, redisPrefix: prefix, everyMs: 3_600_000, deps, lowWater }),
      );
    expect((await queue.getJobSchedulers()).map((s) => s.key)).toEqual([WALLET_UPKEEP_SCHEDULER_ID]);
    await requester.request();
    await eventually(async () => (await pool.denominatedCount(1000)) >= 30, 20_000, 50);
    expect(submitted.length).toBeGreaterThanOrEqual(1);

    // A writer crashed holding a lease: the next on-demand run returns it to free.
    const lease = await pool.reserve({ owner: 'crashed-writer', minSatoshis: 1000, leaseMs: 1000 });
    expect(lease.status).toBe('reserved');
    clock.advance(5000);
    await eventually(async () => (await queue.getJob(WALLET_UPKEEP_ON_DEMAND_ID)) === undefined, 10_000, 50);
    const before = runs.length;
    await requester.request();
    await eventually(async () => runs.length > before && (await pool.status()).leased.count === 0, 20_000, 50);
    const s = await pool.status();
    expect(s.unsettledTransactions).toBe(0);
    expect(s.free.count).toBeGreaterThanOrEqual(31);
    for (const r of running.splice(0)) await r.close();
  });

  it('a failed coinbase scan (devnet unreachable) is reported, and the split still runs on what the pool holds', async () => {
    await pool.add([{ txId: 'c3'.repeat(32), vout: 0, satoshis: 60_000 }]);
    const scanner = new CoinbaseScanner({
      pool,
      source: {
        tipHeight: async () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:9090')),
        coinbaseAt: async () => null,
      },
      fundingScriptHex: identity.lockingScriptHex,
      maturity: 2,
    });
    const { splitter } = await deps();
    const report = await walletUpkeep({ pool, splitter, scanner }, { lowWater: 60, target: 80, satoshisEach: 1000 });
    expect(report.scan).toBeNull();
    expect(report.scanError).toMatch(/ECONNREFUSED/);
    expect(report.split).toMatchObject({ status: 'split', outcome: 'accepted' });
  });

  it('a target above one split (1000 outputs) fills in one run: several splits, each accepted before the next', async () => {
    await pool.add([{ txId: 'd4'.repeat(32), vout: 0, satoshis: 3_000_000 }]);
    const { splitter } = await deps();
    const before = await pool.denominatedCount(1000);
    const report = await walletUpkeep(
      { pool, splitter, scanner: null },
      { lowWater: before + 100, target: before + 2500, satoshisEach: 1000 },
    );
    expect(report.splits).toBe(3);
    expect(await pool.denominatedCount(1000)).toBe(before + 2500);
    expect((await pool.status()).unsettledTransactions).toBe(0);
  });
});
