import { spawn } from 'node:child_process';
import { freePort } from '@proofline/shared-testing';

/**
 * BENCH_REDIS_URL, or a private redis-server on a free port (no persistence) started for the
 * benchmark; `stop()` ends only that server.
 */
export async function privateRedis(): Promise<{ url: string; stop(): void }> {
  const given = process.env['BENCH_REDIS_URL'];
  if (given) return { url: given, stop: () => undefined };
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, 300));
  return { url: `redis://127.0.0.1:${port}`, stop: () => server.kill('SIGTERM') };
}
