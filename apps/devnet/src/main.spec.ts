/**
 * The devnet app as a process (its composition root through tsx; the launcher spec runs the
 * compiled bundle): configuration, its own Redis connection, coinbases paying WALLET_SEED's
 * funding address, DEVNET_PORT, DEVNET_API_KEY, the strictness and reality settings, /liveness,
 * graceful SIGTERM.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Transaction } from '@bsv/sdk';
import { fundingIdentity } from '@proofline/chain-wallet';
import { devnetKeys, legacyDevnetTipKey } from '@proofline/devnet';
import { createRedis, deleteByPrefix } from '@proofline/shared-redis';
import { eventually, freePort, testRedis, testRedisEnv, uniquePrefix } from '@proofline/shared-testing';

const ROOT = path.resolve(__dirname, '../../..');

/** The devnet app through tsx, with PATH, HOME and the test Redis as REDIS_URL (overridable) plus `env`. */
function spawnDevnet(env: Record<string, string>) {
  return spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'apps/devnet/src/main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...testRedisEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A raw (non-EF) transaction spending output 0 of `txid` (unsigned: a 460 comes before any script check). */
function rawSpendOf(txid: string): string {
  const prev = Buffer.from(txid, 'hex').reverse().toString('hex');
  const output = 'e803000000000000' + '0100'; // 1000 sat, script OP_0
  return '01000000' + `01${prev}00000000` + '00ffffffff' + `01${output}` + '00000000';
}

jest.setTimeout(60_000);

describe('apps/devnet', () => {
  const prefix = uniquePrefix('devnetapp');
  const { redis, cleanup } = testRedis(prefix);
  /** REDIS_PREFIX of the other runs (no `:` allowed in it, so not under `prefix:`): removed after all. */
  const others = ['strict', '-own', '-legacy', '-old'].map((s) => `${prefix}${s}`);
  afterAll(async () => {
    for (const p of others) await deleteByPrefix(redis, p);
    await cleanup();
  });

  it('serves ARC v1 on DEVNET_PORT behind DEVNET_API_KEY, mines to the wallet seed’s funding address, stops on SIGTERM', async () => {
    const port = await freePort();
    const seed = 'cd'.repeat(32);
    const child = spawnDevnet({
      REDIS_PREFIX: prefix,
      HOST: '127.0.0.1',
      DEVNET_PORT: String(port),
      DEVNET_API_KEY: 'app-devnet-key',
      WALLET_SEED: seed,
      BLOCK_INTERVAL_MS: '200',
      LOG_LEVEL: 'info',
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const base = `http://127.0.0.1:${port}`;
    try {
      await eventually(async () => (await fetch(`${base}/liveness`)).ok, 40_000, 100);
      expect((await fetch(`${base}/v1/policy`)).status).toBe(401);
      expect((await fetch(`${base}/v1/policy`, { headers: { Authorization: 'Bearer app-devnet-key' } })).status).toBe(
        200,
      );
      // Blocks keep coming on BLOCK_INTERVAL_MS, with no worker.
      await eventually(
        async () => ((await (await fetch(`${base}/chain/info`)).json()) as { blocks: number }).blocks >= 3,
        20_000,
        100,
      );
      const cb = (await (await fetch(`${base}/block/height/0/coinbase`)).json()) as { hex: string };
      expect(Transaction.fromHex(cb.hex).outputs[0]?.lockingScript.toHex()).toBe(
        fundingIdentity(seed, 'devnet').lockingScriptHex,
      );
      // Its state lives under <REDIS_PREFIX>:{devnet}.
      expect(devnetKeys(prefix).tip).toBe(`${prefix}:{devnet}:chain:tip`);
      expect(await redis.hget(devnetKeys(prefix).tip, 'height')).not.toBeNull();
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out).toContain('"msg":"devnet node stopping"');
    expect(out).not.toMatch(/ECONNREFUSED|connection error/i);
  });

  it('passes DEVNET_STRICT, DEVNET_STANDARD_FORMAT, DEVNET_REJECT_CALLBACK_CONTAINING and DEVNET_SUBMIT_DELAY_MS to the node', async () => {
    const port = await freePort();
    const child = spawnDevnet({
      REDIS_PREFIX: others[0] as string,
      HOST: '127.0.0.1',
      DEVNET_PORT: String(port),
      WALLET_SEED: 'ce'.repeat(32),
      DEVNET_STRICT: 'true',
      DEVNET_STANDARD_FORMAT: 'false',
      DEVNET_REJECT_CALLBACK_CONTAINING: 'http://localhost, https://localhost',
      DEVNET_SUBMIT_DELAY_MS: '300',
      LOG_LEVEL: 'warn',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const base = `http://127.0.0.1:${port}`;
    const post = (headers: Record<string, string>, rawTx: string) =>
      fetch(`${base}/v1/tx`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify({ rawTx }),
      });
    try {
      await eventually(async () => (await fetch(`${base}/liveness`)).ok, 40_000, 100);
      const policy = (await (await fetch(`${base}/v1/policy`)).json()) as {
        policy: { standardFormatSupported: boolean };
      };
      expect(policy.policy.standardFormatSupported).toBe(false);
      // A refused callback URL, and bytes that are no transaction (DEVNET_STRICT): 400.
      expect((await post({ 'X-CallbackUrl': 'http://localhost:3000/arc/callback' }, '00')).status).toBe(400);
      expect((await post({}, 'zz')).status).toBe(400);
      // A raw coinbase spend (not EF): 460, after the submission delay.
      const cb = (await (await fetch(`${base}/block/height/0/coinbase`)).json()) as { txid: string };
      const spendHex = rawSpendOf(cb.txid);
      const started = Date.now();
      const answer = await post({}, spendHex);
      expect(answer.status).toBe(460);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  /** Runs the app with `env` until it exits: its exit code and stderr. */
  const exitOf = async (env: Record<string, string>) => {
    const child = spawnDevnet({ WALLET_SEED: 'ef'.repeat(32), ...env });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    return { code, err: err.trim() };
  };

  it('refuses a DEVNET_STATUS_BEFORE_SEEN that is not below SEEN_ON_NETWORK with a one-line configuration error (exit 78)', async () => {
    expect(await exitOf({ DEVNET_STATUS_BEFORE_SEEN: 'SEEN_ON_NETWORK' })).toEqual({
      code: 78,
      err: 'proofline devnet: configuration error: DEVNET_STATUS_BEFORE_SEEN: must be one of RECEIVED, STORED, ANNOUNCED_TO_NETWORK, REQUESTED_BY_NETWORK, SENT_TO_NETWORK, ACCEPTED_BY_NETWORK (got SEEN_ON_NETWORK)',
    });
  });

  it('refuses to run on another NETWORK with a one-line configuration error (exit 78)', async () => {
    expect(await exitOf({ NETWORK: 'testnet' })).toEqual({
      code: 78,
      err: 'proofline devnet: configuration error: NETWORK: the devnet node only runs with NETWORK=devnet (got testnet; set ARC_URL to an external ARC)',
    });
  });

  it("keeps its chain in DEVNET_REDIS_URL, unless the service's Redis already holds the chain the wallet was funded from", async () => {
    // A redis-server of the node's own, as `npm start` gives it (a Redis Cluster has no database 1).
    const ownPort = await freePort();
    const ownServer = spawn('redis-server', ['--port', String(ownPort), '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const own = `redis://127.0.0.1:${ownPort}`;
    const ownRedis = createRedis(own, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    ownRedis.on('error', () => undefined);
    const run = async (p: string) => {
      const port = await freePort();
      const child = spawnDevnet({
        DEVNET_REDIS_URL: own,
        REDIS_PREFIX: p,
        HOST: '127.0.0.1',
        DEVNET_PORT: String(port),
        BLOCK_INTERVAL_MS: '200',
        LOG_LEVEL: 'warn',
      });
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        await eventually(
          async () =>
            ((await (await fetch(`http://127.0.0.1:${port}/chain/info`)).json()) as { blocks: number }).blocks >= 2,
          40_000,
          100,
        );
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
      return out;
    };
    try {
      await eventually(async () => (await ownRedis.ping()) === 'PONG', 10_000, 50);
      const fresh = others[1] as string;
      await run(fresh);
      expect(await ownRedis.exists(devnetKeys(fresh).tip)).toBe(1);
      expect(await redis.exists(devnetKeys(fresh).tip)).toBe(0);

      const legacy = others[2] as string;
      await redis.hset(devnetKeys(legacy).tip, 'hash', '00'.repeat(32), 'height', '0', 'time', '0');
      const out = await run(legacy);
      expect(out).toContain("the devnet's chain is in the service's Redis");
      expect(await ownRedis.exists(devnetKeys(legacy).tip)).toBe(0);
    } finally {
      ownRedis.disconnect();
      ownServer.kill('SIGKILL');
    }
  });

  it('refuses to start a new chain beside one under the key names from before the hash tags (exit 1, nothing written)', async () => {
    const old = others[3] as string;
    await redis.hset(legacyDevnetTipKey(old), 'hash', '00'.repeat(32), 'height', '0', 'time', '0');
    const { code, err } = await exitOf({ REDIS_PREFIX: old, LOG_LEVEL: 'warn' });
    expect(code).toBe(1);
    expect(err).toBe(
      `proofline devnet: failed to start: the devnet's chain in REDIS_URL is under the key names from before Redis Cluster support (${old}:devnet:chain:tip): move its keys first with \`npm run cli -- redis migrate-keys\` (libs/devnet/README.md, "Redis keys")`,
    );
    expect(await redis.exists(devnetKeys(old).tip)).toBe(0);
  });
});
