/**
 * `npm run bench`: starts a private stack (its own redis-server on a free port, the API and
 * WORKERS worker processes) or uses BENCH_URL + BENCH_KEY, then prints:
 *   1. accepted independent SHA256 writes/s and p50/p99 latency, 1 KiB bodies, 64 connections
 *      (after a 2 s warm-up that is not counted)
 *   2. time from write to Merkle proof (status with confirmation.merkleProof)
 *   3. navigate over a 10,000-link chain (one call of 10,000 links and 10 pages of 1,000)
 * Options (env): BENCH_SECONDS (10), BENCH_CONNECTIONS (64), BENCH_CHAIN (10000), WORKERS (2),
 * BLOCK_INTERVAL_MS (1000).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { FundingPool } from '@proofline/chain-wallet';
import { fundPool } from '@proofline/records-testing';
import { createRedis, resolvePartitions } from '@proofline/shared-redis';
import { freePort } from '@proofline/shared-testing';
import { newApiKey, pct, request as call, stopProcess, waitFor } from './stack-client';
import type { Reply } from './stack-client';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 64);
const CHAIN = Number(process.env['BENCH_CHAIN'] ?? 10_000);
const WORKERS = Number(process.env['WORKERS'] ?? 2);
const BLOCK_INTERVAL_MS = Number(process.env['BLOCK_INTERVAL_MS'] ?? 1000);

const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });

const request = (base: string, method: string, p: string, key: string, body?: Buffer): Promise<Reply> =>
  call(agent, base, method, p, key, body);

/**
 * The stack runs the compiled apps (`npm run bench` builds dist/ first when stale), like
 * `npm start`, and stops like it: the apps first, waited for, then redis-server.
 */
async function startStack(): Promise<{ base: string; key: string; stop: () => Promise<void> }> {
  const redisPort = await freePort();
  const apiPort = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-bench-'));
  const redis = spawn(
    'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const apps: ChildProcess[] = [];
  const key = newApiKey();
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    REDIS_PREFIX: 'bench',
    PORT: String(apiPort),
    BOOTSTRAP_API_KEY: key,
    AUTH_JWT_SECRET: process.env['AUTH_JWT_SECRET'] ?? randomBytes(32).toString('hex'),
    BLOCK_INTERVAL_MS: String(BLOCK_INTERVAL_MS),
    MAX_LINKS: String(Math.max(CHAIN, 1000)),
  };
  const profile = process.env['BENCH_PROFILE_DIR']
    ? ['--cpu-prof', '--cpu-prof-dir', process.env['BENCH_PROFILE_DIR']]
    : [];
  const run = (app: string) =>
    apps.push(
      spawn(process.execPath, [...(app === 'api' ? profile : []), path.join(ROOT, 'dist', 'apps', app, 'main.js')], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      }),
    );
  await new Promise((r) => setTimeout(r, 300));
  // Every write reserves a funding UTXO: fund the pool for the whole run (writes at ~600/s, the
  // chain, the warm-up).
  const pool = createRedis(env.REDIS_URL, { maxRetriesPerRequest: 2 });
  try {
    await fundPool(
      new FundingPool(pool, {
        prefix: env.REDIS_PREFIX,
        address: 'bench',
        // The service's count: REDIS_PARTITIONS, or what it resolves when unset.
        partitions: (
          await resolvePartitions(
            pool,
            env.REDIS_PREFIX,
            process.env['REDIS_PARTITIONS'] ? Number(process.env['REDIS_PARTITIONS']) : undefined,
          )
        ).count,
      }),
      Number(process.env['BENCH_POOL_UTXOS'] ?? CHAIN + 40_000),
      1000,
    );
  } finally {
    await pool.quit();
  }
  run('api');
  for (let i = 0; i < WORKERS; i += 1) run('worker');
  const base = `http://127.0.0.1:${apiPort}`;
  await waitFor(
    async () => (await request(base, 'GET', '/readiness', key)).status === 200,
    60_000,
    'the stack to be ready',
  );
  return {
    base,
    key,
    stop: async () => {
      await Promise.all(apps.map((c) => stopProcess(c, 12_000)));
      await stopProcess(redis, 5000);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function benchWrites(base: string, key: string): Promise<string[]> {
  const body = randomBytes(1024);
  // warm-up (JIT, connection pool, Lua script cache): 2 s of the same load, not counted
  const warmUntil = Date.now() + 2000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < warmUntil) await request(base, 'POST', '/api/v1/records?encode=SHA256', key, body);
    }),
  );
  const latencies: number[] = [];
  let errors = 0;
  const until = Date.now() + SECONDS * 1000;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < until) {
        const t0 = process.hrtime.bigint();
        const res = await request(base, 'POST', '/api/v1/records?encode=SHA256', key, body);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (res.status === 200) latencies.push(ms);
        else errors += 1;
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return [
    `independent SHA256 writes, 1 KiB, ${CONNECTIONS} connections, ${SECONDS} s: ${(latencies.length / elapsed).toFixed(0)} accepted/s ` +
      `(p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, ${latencies.length} ok, ${errors} errors)`,
  ];
}

async function benchProof(base: string, key: string): Promise<string[]> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const t0 = Date.now();
    const res = await request(base, 'POST', '/api/v1/records?encode=SHA256', key, randomBytes(1024));
    const { txId } = JSON.parse(res.body) as { txId: string };
    await waitFor(
      async () => {
        const s = await request(base, 'GET', `/api/v1/records/${txId}/status`, key);
        const parsed = JSON.parse(s.body) as { confirmation: { merkleProof?: unknown } | null };
        return Boolean(parsed.confirmation?.merkleProof);
      },
      120_000,
      'a Merkle proof',
    );
    samples.push(Date.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return [
    `write -> Merkle proof (BLOCK_INTERVAL_MS=${BLOCK_INTERVAL_MS}): median ${pct(samples, 50)} ms, max ${samples[samples.length - 1]} ms over ${samples.length} writes`,
  ];
}

async function benchNavigate(base: string, key: string): Promise<string[]> {
  const t0 = Date.now();
  const created = await request(base, 'POST', '/api/v1/linkedrecords', key, Buffer.from('v0'));
  let { txId, updateToken } = JSON.parse(created.body) as { txId: string; updateToken: string };
  const first = txId;
  for (let i = 1; i < CHAIN; i += 1) {
    const res = await request(
      base,
      'POST',
      `/api/v1/linkedrecords/${txId}/update?updateToken=${encodeURIComponent(updateToken)}`,
      key,
      Buffer.from(`v${i}`),
    );
    if (res.status !== 200) throw new Error(`update ${i} failed: ${res.status} ${res.body}`);
    ({ txId, updateToken } = JSON.parse(res.body) as { txId: string; updateToken: string });
  }
  const buildMs = Date.now() - t0;
  const lines = [
    `built a ${CHAIN}-link chain with sequential updates in ${(buildMs / 1000).toFixed(1)} s (${(CHAIN / (buildMs / 1000)).toFixed(0)} updates/s)`,
  ];

  const timeIt = async (label: string, fn: () => Promise<void>, runs = 5) => {
    const ms: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      const s = process.hrtime.bigint();
      await fn();
      ms.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    ms.sort((a, b) => a - b);
    lines.push(`${label}: median ${pct(ms, 50).toFixed(1)} ms (min ${ms[0]?.toFixed(1)} ms)`);
  };
  await timeIt(`navigate ${CHAIN - 1} links forward in one call`, async () => {
    const r = await request(base, 'GET', `/api/v1/linkedrecords/${first}/navigate?links=${CHAIN - 1}`, key);
    const body = JSON.parse(r.body) as { txIds: string[] };
    if (body.txIds.length !== CHAIN - 1) throw new Error(`navigate returned ${body.txIds.length}`);
  });
  await timeIt(`navigate ${CHAIN - 1} links backward in pages of 1000`, async () => {
    let at = txId;
    let seen = 0;
    for (;;) {
      const r = await request(base, 'GET', `/api/v1/linkedrecords/${at}/navigate?links=-1000`, key);
      const body = JSON.parse(r.body) as { txIds: string[]; endOfLinks: boolean };
      seen += body.txIds.length;
      if (body.endOfLinks || body.txIds.length === 0) break;
      at = body.txIds[body.txIds.length - 1] as string;
    }
    if (seen !== CHAIN - 1) throw new Error(`paged navigate saw ${seen}`);
  });
  return lines;
}

async function main(): Promise<void> {
  const external = process.env['BENCH_URL'];
  const stack = external
    ? { base: external, key: process.env['BENCH_KEY'] ?? '', stop: async () => undefined }
    : await startStack();
  console.log(
    `proofline bench on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), ${external ? external : `private stack with ${WORKERS} worker(s)`}`,
  );
  try {
    for (const line of await benchWrites(stack.base, stack.key)) console.log(line);
    for (const line of await benchProof(stack.base, stack.key)) console.log(line);
    for (const line of await benchNavigate(stack.base, stack.key)) console.log(line);
  } finally {
    agent.destroy();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
