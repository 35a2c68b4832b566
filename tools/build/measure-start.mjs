#!/usr/bin/env node
/**
 * Measures (1) the time from starting a launcher command to the API's /readiness answering 200
 * and (2) the time from a SIGKILL of the API process to a replaced API answering 200 again.
 * Each run gets its own redis-server and free ports; the command runs in its own process group
 * and is stopped with SIGINT (Ctrl-C) at the end.
 *
 *   node tools/build/measure-start.mjs [--runs N] -- npm start
 *   node tools/build/measure-start.mjs -- npx tsx apps/launcher/src/main.ts
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const args = process.argv.slice(2);
const sep = args.indexOf('--');
const command = args.slice(sep + 1);
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 && runsAt < sep ? Number(args[runsAt + 1]) : 3;

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ready = (url) =>
  fetch(url, { signal: AbortSignal.timeout(1000) }).then(
    (r) => r.status === 200,
    () => false,
  );

/** Descendants of `root` whose argv mentions apps/api/ (the API process, compiled or not). */
function apiPids(root) {
  const parent = new Map();
  const argv = new Map();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      parent.set(Number(e), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      argv.set(Number(e), fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0'));
    } catch {
      // gone
    }
  }
  const under = (pid) => {
    for (let p = pid; p; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  return [...argv]
    .filter(([pid, a]) => pid !== root && under(pid) && a.some((x) => x.includes('apps/api/')) && a[0].endsWith('node'))
    .map(([pid]) => pid);
}

/** CPU time (user + system) a process has used so far, in ms (clock ticks of 10 ms). */
function cpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

async function once() {
  const [rp, ap, gp] = [await freePort(), await freePort(), await freePort()];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-measure-'));
  const redis = spawn(
    'redis-server',
    ['--port', String(rp), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  while (
    !(await new Promise((r) =>
      net
        .connect(rp, '127.0.0.1')
        .on('connect', function () {
          this.destroy();
          r(true);
        })
        .on('error', () => r(false)),
    ))
  )
    await sleep(20);
  const env = {
    ...process.env,
    REDIS_URL: `redis://127.0.0.1:${rp}`,
    PORT: String(ap),
    GRAPHQL_PORT: String(gp),
    WORKERS: '1',
    LOG_LEVEL: 'warn',
    AUTH_JWT_SECRET: 'x'.repeat(40),
  };
  const url = `http://127.0.0.1:${ap}/readiness`;
  const t0 = performance.now();
  const child = spawn(command[0], command.slice(1), { env, stdio: 'ignore', detached: true });
  while (!(await ready(url))) await sleep(20);
  const startMs = performance.now() - t0;
  const [victim] = apiPids(child.pid);
  const apiCpuMs = cpuMs(victim);
  await sleep(1500);
  process.kill(victim, 'SIGKILL');
  const t1 = performance.now();
  let refused = 0;
  while (!(await ready(url))) {
    refused += 1;
    await sleep(20);
  }
  const restartMs = performance.now() - t1;
  const [replacement] = apiPids(child.pid);
  const replacementCpuMs = cpuMs(replacement);
  process.kill(-child.pid, 'SIGINT');
  await new Promise((r) => child.once('exit', r));
  redis.kill('SIGTERM');
  await new Promise((r) => redis.once('exit', r));
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    startMs: Math.round(startMs),
    restartMs: Math.round(restartMs),
    failedProbes: refused,
    apiCpuMsAtReady: apiCpuMs,
    replacementCpuMsAtReady: replacementCpuMs,
  };
}

const results = [];
for (let i = 0; i < RUNS; i += 1) {
  const r = await once();
  results.push(r);
  console.log(JSON.stringify(r));
}
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `${command.join(' ')}: start -> ready median ${median(results.map((r) => r.startMs))} ms; SIGKILL of the API -> replaced and ready median ${median(results.map((r) => r.restartMs))} ms; ` +
    `API CPU time until ready median ${median(results.map((r) => r.apiCpuMsAtReady))} ms (${RUNS} runs, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(2)})`,
);
