import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { LockingScript, Spend, Transaction } from '@bsv/sdk';
import { FundingPool, fundingIdentity } from '@proofline/chain-wallet';
import { DEVNET_WALLET_SEED } from '@proofline/shared-config';
import { DEFAULT_PARTITIONS } from '@proofline/shared-redis';
import { testRedis, testRedisEnv, uniquePrefix } from '@proofline/shared-testing';
import { splitProblem } from './wallet-commands';

const ROOT = path.resolve(__dirname, '../../..');
// Each CLI run starts tsx (seconds on a loaded machine).
jest.setTimeout(120_000);

describe('wallet CLI (run as a real process)', () => {
  const prefix = uniquePrefix('cliw');
  const { redis, cleanup } = testRedis(prefix);
  // Sharded on every topology (an unset REDIS_PARTITIONS would be 1 on one Redis): the deposits
  // and the split are checked against several shards.
  const env = {
    ...process.env,
    ...testRedisEnv(),
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    REDIS_PARTITIONS: String(DEFAULT_PARTITIONS),
  };
  const cli = (args: string[], extraEnv: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'apps/cli/src/main.ts'), ...args], {
      cwd: ROOT,
      env: { ...env, ...extraEnv },
      encoding: 'utf8',
      timeout: 30_000,
    });
  const address = fundingIdentity(DEVNET_WALLET_SEED, 'devnet').address;
  const cliAsync = (args: string[], extraEnv: Record<string, string> = {}) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'apps/cli/src/main.ts'), ...args], {
        cwd: ROOT,
        env: { ...env, ...extraEnv },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });

  afterAll(cleanup);

  it('wallet import adds deposits once; wallet status prints the address, balance, pool and pending spends', async () => {
    const a = `${'a1'.repeat(32)}:0:50000`;
    const b = `${'b2'.repeat(32)}:1:1000`;
    const first = cli(['wallet', 'import', a, b]);
    expect(first.status).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ total: 2, imported: 2, skipped: 0 });
    expect(JSON.parse(cli(['wallet', 'import', a]).stdout)).toEqual({ total: 1, imported: 0, skipped: 1 });

    // A write in flight: one UTXO spent by an unsettled transaction with pending change.
    // Sharded as the CLI's (REDIS_PARTITIONS above): the deposits went to the emptiest shards.
    const pool = new FundingPool(redis, { prefix, address, partitions: DEFAULT_PARTITIONS });
    const shards = await pool.freeSatoshisByShard();
    // The shard of the smaller deposit (the larger one is left for the split below).
    const partition = pool.partitions.unit(shards.indexOf(1000));
    expect(shards.filter((sats) => sats > 0)).toHaveLength(2);
    const r = await pool.reserve({ owner: 'w', minSatoshis: 1000, partition });
    if (r.status !== 'reserved') throw new Error('expected a reservation');
    const txId = 'c3'.repeat(32);
    await pool.commit({ txId, owner: 'w', inputs: r.utxos, outputs: [{ txId, vout: 2, satoshis: 800 }], partition });

    const out = cli(['wallet', 'status']);
    expect(out.status).toBe(0);
    expect(out.stdout).toContain(`funding address ${address}`);
    expect(out.stdout).toMatch(/balance\s+50,800 sat/);
    expect(out.stdout).toMatch(/free\s+1 UTXOs, 50,000 sat/);
    expect(out.stdout).toMatch(/pending\s+1 outputs, 800 sat/);
    expect(out.stdout).toMatch(/spent\s+1 inputs, 1,000 sat/);
    expect(out.stdout).toContain(`${txId} record since`);
  });

  it('wallet split goes through the ARC client: EF bytes whose every input the interpreter accepts, outputs free once ARC has SEEN it', async () => {
    // A minimal ARC v1 over real HTTP: the policy, and POST /v1/tx answering SEEN_ON_NETWORK.
    const posted: { rawTx: string; auth: string | undefined }[] = [];
    const arc = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if (req.method === 'GET' && req.url === '/v1/policy') {
          res.end(
            JSON.stringify({ policy: { miningFee: { satoshis: 50, bytes: 1000 }, maxtxsizepolicy: 100_000_000 } }),
          );
          return;
        }
        if (req.method === 'POST' && req.url === '/v1/tx') {
          const { rawTx } = JSON.parse(body) as { rawTx: string };
          posted.push({ rawTx, auth: req.headers.authorization });
          res.end(
            JSON.stringify({ txid: Transaction.fromHexEF(rawTx).id('hex'), txStatus: 'SEEN_ON_NETWORK', status: 200 }),
          );
          return;
        }
        res.statusCode = 404;
        res.end('{}');
      });
    });
    await new Promise<void>((r) => arc.listen(0, '127.0.0.1', r));
    const arcUrl = `http://127.0.0.1:${(arc.address() as AddressInfo).port}`;
    try {
      const pool = new FundingPool(redis, { prefix, address, partitions: DEFAULT_PARTITIONS });
      const before = await pool.status();
      const splitEnv = {
        ARC_URL: arcUrl,
        ARC_API_KEY: 'test-arc-key',
        POOL_UTXO_SATS: '1000',
        POOL_LOW_WATER: '10',
        POOL_TARGET: '20',
      };
      // spawnSync would block this process's event loop and with it the fake ARC: run the CLI asynchronously.
      const out = await cliAsync(['wallet', 'split'], splitEnv);
      expect(out.stderr).toBe('');
      expect(out.status).toBe(0);
      const report = JSON.parse(out.stdout) as {
        status: string;
        txId: string;
        outputs: number;
        fee: number;
        outcome: string;
      };
      expect(report).toMatchObject({ status: 'split', outputs: 20, outcome: 'accepted' });
      expect(posted).toHaveLength(1);
      expect(posted[0]?.auth).toBe('Bearer test-arc-key');

      // Every input checked by the sdk's interpreter against the output it spends (EF carries it).
      const tx = Transaction.fromHexEF(posted[0]!.rawTx);
      expect(tx.id('hex')).toBe(report.txId);
      const script = fundingIdentity(DEVNET_WALLET_SEED, 'devnet').lockingScriptHex;
      tx.inputs.forEach((input, inputIndex) => {
        const source = input.sourceTransaction?.outputs[input.sourceOutputIndex];
        expect(source?.lockingScript.toHex()).toBe(script);
        const spend = new Spend({
          sourceTXID: input.sourceTXID ?? input.sourceTransaction!.id('hex'),
          sourceOutputIndex: input.sourceOutputIndex,
          sourceSatoshis: source!.satoshis!,
          lockingScript: LockingScript.fromHex(script),
          transactionVersion: tx.version,
          otherInputs: tx.inputs.filter((_, j) => j !== inputIndex),
          outputs: tx.outputs,
          inputIndex,
          unlockingScript: input.unlockingScript!,
          inputSequence: input.sequence ?? 0xffffffff,
          lockTime: tx.lockTime,
        });
        expect(spend.validate()).toBe(true);
      });
      // Fee at least 2 x ARC's 50 sat/kB (the margin of effectiveFeeRate).
      expect(report.fee).toBeGreaterThanOrEqual(Math.ceil((tx.toBinary().length * 100) / 1000));
      // ARC said SEEN: the outputs are free now, and the balance only lost the fee.
      const after = await pool.status();
      expect(await pool.denominatedCount(1000)).toBe(20);
      expect(after.balance).toBe(before.balance - report.fee);
      expect(after.pending.count).toBe(before.pending.count);
    } finally {
      await new Promise((r) => arc.close(r));
    }
  });

  it('refuses a malformed TXID:VOUT:SATS and a split ARC cannot take, with a one-line reason', async () => {
    const bad = cli(['wallet', 'import', 'nope:0:1']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/proofline cli: "nope:0:1" is not TXID:VOUT:SATS/);
    // Nothing listens on ARC_URL: the split stays committed (same bytes re-submitted later) and the CLI says why.
    const split = await cliAsync(['wallet', 'split'], {
      ARC_URL: 'http://127.0.0.1:9',
      POOL_UTXO_SATS: '1000',
      POOL_LOW_WATER: '10',
      POOL_TARGET: '40',
    });
    expect(split.status).toBe(1);
    expect(split.stderr.trim().split('\n')).toHaveLength(1);
    expect(split.stderr).toMatch(/^proofline cli: ARC is not reachable/);
  });

  it('refuses the devnet seed outside the devnet', () => {
    const out = cli(['wallet', 'status'], { NETWORK: 'mainnet' });
    expect(out.status).toBe(78);
    expect(out.stderr).toMatch(/WALLET_SEED: required when NETWORK is mainnet/);
  });

  it('says clearly when ARC is unreachable', () => {
    expect(
      splitProblem({ status: 'unreachable', txId: 'ab'.repeat(32), error: 'connect ECONNREFUSED 127.0.0.1:9090' }),
    ).toMatch(/^ARC is not reachable \(connect ECONNREFUSED 127\.0\.0\.1:9090\); split abab/);
    expect(splitProblem({ status: 'split', txId: 'x', outputs: 3, fee: 1, outcome: 'accepted' })).toBeNull();
  });
});
