import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import {
  holdsNothingUnder,
  redisAnswers,
  startLocalRedis,
  stopOrphanedRedis,
  stopOrphanedRedisIn,
} from './redis-local';

describe('holdsNothingUnder (a fresh service Redis gets a new devnet chain)', () => {
  const prefix = uniquePrefix('fresh');
  const { redis, cleanup } = testRedis(prefix);
  afterAll(cleanup);

  // The URL names one node; on a cluster the other masters are walked too.
  const target = { url: testRedisUrl() };

  it('is true with no key under the prefix, false once one exists on any master (keys of other prefixes do not count)', async () => {
    await redis.set(`${prefix}-other:x`, '1');
    expect(await holdsNothingUnder(target, prefix)).toBe(true);
    // Keys of several hash tags: on a three-master cluster some live on a node the URL does not name.
    for (const unit of ['rec', 'arc', 'idty', 'wh', 'proc', 'devnet']) {
      const key = `${prefix}:{${unit}}:x`;
      await redis.set(key, '1');
      expect(await holdsNothingUnder(target, prefix)).toBe(false);
      await redis.del(key);
    }
    expect(await holdsNothingUnder(target, prefix)).toBe(true);
    await redis.del(`${prefix}-other:x`);
  });
});

describe('startLocalRedis after a launcher that was SIGKILLed (its redis-server left running)', () => {
  const dirs: string[] = [];
  const started: ChildProcess[] = [];
  afterAll(() => {
    for (const c of started) c.kill('SIGKILL');
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
  const dataDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-redis-local-'));
    dirs.push(d);
    return d;
  };
  const gone = (child: ChildProcess) =>
    new Promise<void>((resolve) =>
      child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
    );

  it('stops the orphan (SIGTERM: its AOF is flushed) before a new server opens the same directory', async () => {
    const dir = dataDir();
    const first = await startLocalRedis(`redis://127.0.0.1:${await freePort()}`, dir);
    started.push(first);
    expect(Number(fs.readFileSync(path.join(dir, 'redis-server.pid'), 'utf8'))).toBe(first.pid);
    // The launcher that started it is gone: its pid file names a process that no longer runs.
    const dead = spawn(process.execPath, ['-e', '']);
    await gone(dead);
    fs.writeFileSync(path.join(dir, 'launcher.pid'), String(dead.pid));

    const url = `redis://127.0.0.1:${await freePort()}`;
    const second = await startLocalRedis(url, dir);
    started.push(second);
    await gone(first);
    expect(first.exitCode).toBe(0); // redis-server exits 0 after a SIGTERM it handled
    expect(await redisAnswers(url)).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'redis.log'), 'utf8')).toContain('Received SIGTERM');
  });

  it('stopOrphanedRedisIn: the orphan of a directory about to be cleared (a new devnet chain) is stopped first', async () => {
    const dir = dataDir();
    const orphan = await startLocalRedis(`redis://127.0.0.1:${await freePort()}`, dir);
    started.push(orphan);
    const dead = spawn(process.execPath, ['-e', '']);
    await gone(dead);
    fs.writeFileSync(path.join(dir, 'launcher.pid'), String(dead.pid));
    expect(await stopOrphanedRedisIn(dir)).toBe(true);
    await gone(orphan);
    expect(orphan.exitCode).toBe(0);
    expect(await stopOrphanedRedisIn(dir)).toBe(false); // nothing left to stop
  });

  it('leaves a server alone while the launcher that started it runs, and does nothing without a pid file', async () => {
    const dir = dataDir();
    const server = await startLocalRedis(`redis://127.0.0.1:${await freePort()}`, dir);
    started.push(server);
    // A live launcher (a node process whose command line names the launcher) owns it.
    const launcher = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', 'apps/launcher/main.js']);
    started.push(launcher);
    await new Promise((r) => setTimeout(r, 200));
    fs.writeFileSync(path.join(dir, 'launcher.pid'), String(launcher.pid));
    expect(await stopOrphanedRedis(path.join(dir, 'redis-server.pid'), path.join(dir, 'launcher.pid'))).toBe(false);
    expect(server.exitCode).toBeNull();
    expect(await stopOrphanedRedis(path.join(dataDir(), 'redis-server.pid'), path.join(dir, 'launcher.pid'))).toBe(
      false,
    );
  });
});
