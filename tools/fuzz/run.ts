/**
 * `npm run fuzz`: starts a private stack (its own redis-server on a free port, the API, GraphQL
 * and one worker process), sends FUZZ_COUNT (20,000) seeded fuzzed requests over REST and GraphQL
 * and prints the figures. Exits 1 on any answer >= 500, `originalError`, stack trace, REST 4xx or
 * protocol-level refusal without problem+json and errorCode, or any `error` log line. Options (env): FUZZ_SEED (1), FUZZ_COUNT (20000),
 * FUZZ_CONCURRENCY (16), REDIS_URL (use this Redis instead of starting one).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@proofline/shared-testing';
import { fuzz, startStack } from './fuzz';

async function main(): Promise<void> {
  const seed = Number(process.env['FUZZ_SEED'] ?? 1);
  const count = Number(process.env['FUZZ_COUNT'] ?? 20_000);
  const concurrency = Number(process.env['FUZZ_CONCURRENCY'] ?? 16);
  let redisUrl = process.env['REDIS_URL'];
  let stopRedis = async () => undefined as void;
  if (!redisUrl) {
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-fuzz-'));
    const redis = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    );
    redisUrl = `redis://127.0.0.1:${port}`;
    stopRedis = () =>
      new Promise<void>((resolve) => {
        redis.once('exit', () => resolve());
        redis.kill('SIGTERM');
      });
    await new Promise((r) => setTimeout(r, 300));
  }
  const stack = await startStack(redisUrl, `fuzz${seed}`, Math.max(count, 5000));
  try {
    const figures = await fuzz({
      seed,
      count,
      concurrency,
      restPort: stack.restPort,
      graphqlPort: stack.graphqlPort,
      key: stack.key,
    });
    const answered = Object.values(figures.byStatus).reduce((a, b) => a + b, 0);
    process.stdout.write(
      `fuzz seed ${seed}: ${figures.sent} requests in ${(figures.ms / 1000).toFixed(1)} s (${Math.round((figures.sent / figures.ms) * 1000)}/s), ${answered} answered\n`,
    );
    process.stdout.write(
      `no answer: ${JSON.stringify(figures.noAnswer)} (CLIENT_REFUSED: Node's client would not send the header; EPIPE/ECONNRESET: the server answered and closed first, e.g. 413)\n`,
    );
    for (const [label, n] of Object.entries(figures.byStatus).sort())
      process.stdout.write(`  ${label.padEnd(14)} ${n}\n`);
    const internal = figures.failures.filter((f) => f.problems.some((p) => p.startsWith('status '))).length;
    const original = figures.failures.filter((f) => f.problems.includes('originalError in body')).length;
    process.stdout.write(
      `internal errors (>= 500, not counting /readiness 503 not-ready): ${internal}; with originalError: ${original}; violations: ${figures.failures.length}\n`,
    );
    for (const f of figures.failures.slice(0, 20))
      process.stdout.write(
        `  ${f.problems.join(', ')}: ${f.request.method} ${f.request.target} ${f.request.path.slice(0, 120)} -> ${f.status} ${f.body.slice(0, 200)}\n`,
      );
    const notProblem = figures.failures.filter((f) => f.problems.some((p) => p.includes('not problem+json'))).length;
    await new Promise((r) => setTimeout(r, 500)); // the last log lines
    const errorLines = stack.errorLines();
    process.stdout.write(`answers without problem+json: ${notProblem}; error log lines: ${errorLines.length}\n`);
    for (const line of errorLines.slice(0, 10)) process.stdout.write(`  ${line.slice(0, 300)}\n`);
    process.exitCode = figures.failures.length > 0 || errorLines.length > 0 ? 1 : 0;
  } finally {
    await stack.stop();
    await stopRedis();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`fuzz failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
