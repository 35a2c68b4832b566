import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { masters, openRedis } from '@proofline/shared-redis';
import type { RedisClient, RedisTarget } from '@proofline/shared-redis';

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
  const { pidFile, ownerFile } = pidFilesOf(dataDir);
  await stopOrphanedRedis(pidFile, ownerFile);
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      path.resolve(dataDir),
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
      '--logfile',
      'redis.log',
      '--pidfile',
      pidFile,
    ],
    // Its own process group: a terminal's Ctrl-C reaches the apps and the launcher, not this
    // server, which the launcher stops only after the apps have closed their connections.
    { stdio: 'ignore', detached: true },
  );
  fs.writeFileSync(ownerFile, String(process.pid));
  for (let i = 0; i < 100; i += 1) {
    if (child.exitCode !== null)
      throw new Error(`redis-server exited with code ${child.exitCode} (see ${path.join(dataDir, 'redis.log')})`);
    if (await redisAnswers(url, 200)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  throw new Error(`redis-server did not answer on port ${port} within 10 s`);
}

/**
 * True when no key starts with `${prefix}:` on any master (SCAN, bounded: a huge shared Redis, or
 * one that does not answer, counts as not empty). `target` may be one server or a cluster.
 */
export async function holdsNothingUnder(target: RedisTarget, prefix: string): Promise<boolean> {
  let redis: RedisClient | undefined;
  try {
    redis = await openRedis(target, {
      maxRetriesPerRequest: 0,
      enableAutoPipelining: false,
      retryStrategy: () => null,
      connectTimeout: 2000,
    });
    redis.on('error', () => undefined);
    for (const node of await masters(redis)) {
      let cursor = '0';
      for (let i = 0; ; i++) {
        if (i === 200) return false;
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) return false;
        cursor = next;
        if (cursor === '0') break;
      }
    }
    return true;
  } catch {
    return false; // not readable now: keep whatever chain there is
  } finally {
    redis?.disconnect();
  }
}

/** Where a data directory's redis-server and the launcher that started it write their pids. */
function pidFilesOf(dataDir: string): { pidFile: string; ownerFile: string } {
  const dir = path.resolve(dataDir);
  return { pidFile: path.join(dir, 'redis-server.pid'), ownerFile: path.join(dir, 'launcher.pid') };
}

/** {@link stopOrphanedRedis} for the server of `dataDir` (before the directory is cleared, or reused). */
export async function stopOrphanedRedisIn(dataDir: string): Promise<boolean> {
  const { pidFile, ownerFile } = pidFilesOf(dataDir);
  return stopOrphanedRedis(pidFile, ownerFile);
}

/**
 * A redis-server that an earlier launcher started on this data directory and left running when it
 * was SIGKILLed (the server runs in its own process group, so a group signal missed it too): it
 * still holds the directory's append-only file, so it is stopped (SIGTERM: it flushes the file)
 * before a new server opens that file. Told apart by its pid file (`--pidfile`) naming a live
 * redis-server while the launcher that started it (`launcher.pid`) is gone. Linux only (/proc);
 * elsewhere nothing is done.
 */
export async function stopOrphanedRedis(pidFile: string, ownerFile: string, graceMs = 10_000): Promise<boolean> {
  const pid = readPid(pidFile);
  if (pid === undefined || !commandOf(pid)?.includes('redis-server')) return false;
  const owner = readPid(ownerFile);
  if (owner !== undefined && commandOf(owner)?.includes('launcher')) return false;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (commandOf(pid) !== undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (commandOf(pid) !== undefined) process.kill(pid, 'SIGKILL');
  return true;
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The command line of a live process (arguments joined by spaces), undefined when it is gone or /proc is not there. */
function commandOf(pid: number): string | undefined {
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // A zombie (state Z) has exited: it only waits for its parent to read its status.
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return undefined;
    return cmdline.split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}
