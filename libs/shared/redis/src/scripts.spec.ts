import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { deleteByPrefix } from './connection';
import type { RedisClient } from './connection';
import { loadLuaCommands } from './scripts';
import { testClient } from './testing/test-redis';

describe('loadLuaCommands', () => {
  const prefix = `lua-${randomBytes(5).toString('hex')}`;
  let redis: RedisClient;
  let dir: string;

  beforeAll(async () => {
    redis = testClient({ enableAutoPipelining: true });
    // Connected first: a cluster client auto-pipelines only once it knows the slots.
    await redis.ping();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lua-'));
    fs.writeFileSync(
      path.join(dir, 'echo-twice-1.lua'),
      "redis.call('SET', KEYS[1], ARGV[1]) return ARGV[1] .. ARGV[1]",
    );
  });

  afterAll(async () => {
    await deleteByPrefix(redis, prefix);
    await redis.quit();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a command defined while an auto-pipeline is open in the same tick can be called at once', async () => {
    // The first command of this tick opens an auto-pipeline; the script is defined after it.
    const inFlight = redis.set(`${prefix}:a`, '1');
    expect(redis.autoPipelineQueueSize).toBeGreaterThan(0);
    loadLuaCommands(redis, dir);
    const echoed = (redis as unknown as { echoTwice(key: string, v: string): Promise<string> }).echoTwice(
      `${prefix}:b`,
      'xy',
    );
    await expect(Promise.all([inFlight, echoed])).resolves.toEqual(['OK', 'xyxy']);
    expect(await redis.get(`${prefix}:b`)).toBe('xy');
  });

  it('puts the prelude in front of every script and defines each name once', async () => {
    const other = testClient();
    try {
      fs.writeFileSync(path.join(dir, 'with-prelude-0.lua'), 'return twice(ARGV[1])');
      const names = loadLuaCommands(other, dir, { prelude: 'local function twice(s) return s .. s end' });
      expect(names.sort()).toEqual(['echoTwice', 'withPrelude']);
      expect(await (other as unknown as { withPrelude(v: string): Promise<string> }).withPrelude('ab')).toBe('abab');
      expect(loadLuaCommands(other, dir)).toEqual(names);
    } finally {
      fs.rmSync(path.join(dir, 'with-prelude-0.lua'));
      await other.quit();
    }
  });

  it('keeps a #!lua line first, before the prelude, and lets a -n script take any number of keys', async () => {
    const other = testClient();
    const sub = fs.mkdtempSync(path.join(os.tmpdir(), 'lua-'));
    try {
      fs.writeFileSync(
        path.join(sub, 'set-all-n.lua'),
        "#!lua\nfor i = 1, #KEYS do redis.call('SET', KEYS[i], twice(ARGV[1])) end return #KEYS",
      );
      expect(loadLuaCommands(other, sub, { prelude: 'local function twice(s) return s .. s end' })).toEqual(['setAll']);
      const setAll = (other as unknown as { setAll(n: number, ...args: string[]): Promise<number> }).setAll.bind(other);
      const keys = [`${prefix}:{v}:1`, `${prefix}:{v}:2`, `${prefix}:{v}:3`];
      await expect(setAll(3, ...keys, 'z')).resolves.toBe(3);
      expect(await other.mget(...keys)).toEqual(['zz', 'zz', 'zz']);
      // A shebang script may not touch a key it did not declare (Redis refuses it on a cluster; a
      // standalone Redis allows it, so only the declared path is asserted everywhere).
      await expect(setAll(1, `${prefix}:{v}:4`, 'q')).resolves.toBe(1);
    } finally {
      fs.rmSync(sub, { recursive: true, force: true });
      await other.quit();
    }
  });

  it('-n commands of one tick whose keys live on different masters each succeed under auto-pipelining', async () => {
    // Tags {a} (slot 15495) and {b} (slot 3300) lie on different masters of three equal ones, and
    // the count "1" (slot 9842) on the third: grouped by their count, the two calls and the GET
    // would share one pipeline holding keys of two masters, and ioredis would refuse all three.
    const sub = fs.mkdtempSync(path.join(os.tmpdir(), 'lua-'));
    try {
      fs.writeFileSync(
        path.join(sub, 'set-each-n.lua'),
        "#!lua\nfor i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[1]) end return #KEYS",
      );
      loadLuaCommands(redis, sub);
      const setEach = (redis as unknown as { setEach(n: number, ...args: string[]): Promise<number> }).setEach.bind(
        redis,
      );
      const [a, b, c] = [`${prefix}:{a}:1`, `${prefix}:{b}:1`, `${prefix}:{a}:2`];
      const calls = [setEach(1, a, 'x'), setEach(1, b, 'y'), redis.get(`${prefix}:{b}:unset`), setEach(2, a, c, 'z')];
      await expect(Promise.all(calls)).resolves.toEqual([1, 1, null, 2]);
      expect(await Promise.all([redis.get(a), redis.get(b), redis.get(c)])).toEqual(['z', 'y', 'z']);
    } finally {
      fs.rmSync(sub, { recursive: true, force: true });
    }
  });
});
