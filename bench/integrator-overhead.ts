/**
 * `npx tsx bench/integrator-overhead.ts`: what idempotent writes and rate limits add to a write.
 * Starts a private redis-server on a free port, composes two REST apps in this process exactly as
 * production does (`composeApi`, one prefix, a funded pool): one without rate limits, one with
 * RATE_LIMIT_PER_KEY and RATE_LIMIT_PER_TENANT set so high they never refuse. Then, in rounds,
 * BENCH_N (300) sequential independent SHA256 writes of 1 KiB bodies in each mode:
 *   plain        no limits, no Idempotency-Key (the reference write path)
 *   idempotent   no limits, a fresh Idempotency-Key on every write (claim + recorded answer)
 *   rate-limited limits set, no Idempotency-Key (one EVALSHA per request)
 * (the order rotating every round) and prints per mode the median / p95 latency and this process's CPU time per write (client and
 * server share the process, so compare the modes, not the absolute figures).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createFundingWallet } from '@proofline/chain-wallet';
import { createBootstrapKey } from '@proofline/identity-feature';
import { fundPool } from '@proofline/records-testing';
import { loadConfig, systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { createRedis, withResolvedPartitions } from '@proofline/shared-redis';
import { freePort } from '@proofline/shared-testing';
import { createApp } from '../apps/api/src/app';
import { composeApi } from '../apps/api/src/compose';

const N = Number(process.env['BENCH_N'] ?? 300);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

async function waitForRedis(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const probe = createRedis(url, { maxRetriesPerRequest: 1, lazyConnect: true, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      await probe.quit();
      return;
    } catch {
      probe.disconnect();
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`redis at ${url} did not answer`);
}

async function main(): Promise<void> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-int-bench-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const redisUrl = `redis://127.0.0.1:${port}`;
  try {
    await waitForRedis(redisUrl);
    const prefix = `intbench${Date.now()}`;
    const base = {
      REDIS_URL: redisUrl,
      REDIS_PREFIX: prefix,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: 'bench-integrator-overhead-secret-0123456789',
      MAX_PENDING_PUBLICATIONS: '0',
    };
    const logger = createLogger({ level: 'silent', name: 'bench' });
    const plainCfg = loadConfig(base);
    const limitedCfg = loadConfig({ ...base, RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_TENANT: '1000000' });
    const apps = await Promise.all([
      composeApi(plainCfg, logger, systemClock),
      composeApi(limitedCfg, logger, systemClock),
    ]);
    const [plain, limited] = apps as [Awaited<ReturnType<typeof composeApi>>, Awaited<ReturnType<typeof composeApi>>];
    const { pool } = createFundingWallet(plain.deps.redis, await withResolvedPartitions(plain.deps.redis, plainCfg));
    await fundPool(pool, 6 * N * ROUNDS + 1000, 1000);
    const key = await createBootstrapKey({ redis: plain.deps.redis, config: plainCfg, clock: systemClock }, 'bench');
    const servers = await Promise.all(
      [plain, limited].map(async (c) => {
        const server = http.createServer(createApp(c.deps));
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
      }),
    );
    const body = Buffer.alloc(1024, 7);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const post = (url: string, idem: boolean) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const headers: Record<string, string> = {
          'x-api-key': key,
          'content-type': 'application/octet-stream',
          'content-length': String(body.length),
        };
        if (idem) headers['idempotency-key'] = randomUUID();
        const req = http.request(`${url}/api/v1/records?encode=SHA256`, { method: 'POST', headers, agent }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const modes = {
      plain: { url: servers[0]?.url ?? '', idem: false },
      idempotent: { url: servers[0]?.url ?? '', idem: true },
      'rate-limited': { url: servers[1]?.url ?? '', idem: false },
    };
    const results: Record<string, { ms: number[]; cpuUs: number }> = {};
    for (const mode of Object.keys(modes)) results[mode] = { ms: [], cpuUs: 0 };
    for (const m of Object.values(modes)) for (let i = 0; i < 50; i++) await post(m.url, m.idem); // warm-up
    const entries = Object.entries(modes);
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order every round so no mode always runs first (or after the same one).
      for (const [mode, m] of [...entries.slice(round % entries.length), ...entries.slice(0, round % entries.length)]) {
        const r = results[mode] as { ms: number[]; cpuUs: number };
        const cpu = process.cpuUsage();
        for (let i = 0; i < N; i++) {
          const t = process.hrtime.bigint();
          const { status, text } = await post(m.url, m.idem);
          if (status !== 200) throw new Error(`${mode}: status ${status} ${text}`);
          r.ms.push(Number(process.hrtime.bigint() - t) / 1e6);
        }
        const used = process.cpuUsage(cpu);
        r.cpuUs += used.user + used.system;
      }
    }
    const at = (s: number[], q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
    for (const [mode, r] of Object.entries(results)) {
      const s = [...r.ms].sort((a, b) => a - b);
      console.log(
        `${mode.padEnd(13)} median ${at(s, 0.5).toFixed(2)} ms  p95 ${at(s, 0.95).toFixed(2)} ms  CPU ${(r.cpuUs / 1000 / r.ms.length).toFixed(3)} ms/write  (${r.ms.length} writes)`,
      );
    }
    agent.destroy();
    for (const s of servers) s.server.close();
    await Promise.all(apps.map((a) => a.close()));
  } finally {
    child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
