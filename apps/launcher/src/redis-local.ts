import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createRedis } from '@proofline/shared-redis';

/** Answers true when something speaks RESP at host:port and replies to PING (with AUTH if given). */
export function redisAnswers(url: string, timeoutMs = 1000): Promise<boolean> {
  const u = new URL(url);
  const host = u.hostname || '127.0.0.1';
  const port = Number(u.port || 6379);
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    let buffer = '';
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => {
      const auth = u.password
        ? u.username
          ? `AUTH ${decodeURIComponent(u.username)} ${decodeURIComponent(u.password)}\r\n`
          : `AUTH ${decodeURIComponent(u.password)}\r\n`
        : '';
      sock.write(`${auth}PING\r\n`);
    });
    sock.on('data', (d) => {
      buffer += d.toString();
      if (buffer.includes('+PONG')) done(true);
      else if (buffer.startsWith('-')) done(false);
    });
  });
}

export function isLocalUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host === '[::1]';
}

export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Starts a redis-server for the URL's port with its data under `dataDir` (AOF on, no
 * eviction: a queue must never lose jobs to eviction). Resolves once it answers PING.
 */
export async function startLocalRedis(url: string, dataDir: string): Promise<ChildProcess> {
  const port = Number(new URL(url).port || 6379);
  fs.mkdirSync(dataDir, { recursive: true });
  const child = spawn(
    'redis-server',
    [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--dir', path.resolve(dataDir),
      '--appendonly', 'yes',
      '--appendfsync', 'everysec',
      '--save', '',
      '--maxmemory-policy', 'noeviction',
      '--logfile', 'redis.log',
    ],
    // Its own process group: a terminal's Ctrl-C reaches the apps and the launcher, not this
    // server, which the launcher stops only after the apps have closed their connections.
    { stdio: 'ignore', detached: true },
  );
  for (let i = 0; i < 100; i += 1) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode} (see ${path.join(dataDir, 'redis.log')})`);
    if (await redisAnswers(url, 200)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  throw new Error(`redis-server did not answer on port ${port} within 10 s`);
}

/** True when no key starts with `${prefix}:` (SCAN, bounded: a huge shared Redis, or one that does not answer, counts as not empty). */
export async function holdsNothingUnder(url: string, prefix: string): Promise<boolean> {
  const redis = createRedis(url, { maxRetriesPerRequest: 0, enableAutoPipelining: false, retryStrategy: () => null, connectTimeout: 2000 });
  redis.on('error', () => undefined);
  try {
    let cursor = '0';
    for (let i = 0; i < 200; i++) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) return false;
      cursor = next;
      if (cursor === '0') return true;
    }
    return false;
  } catch {
    return false; // not readable now: keep whatever chain there is
  } finally {
    redis.disconnect();
  }
}

