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

  it('a -n script called in the same tick as commands for every master succeeds on an auto-pipelining client', async () => {
    // A cluster client's auto-pipeline once grouped a -n script by the slot of its key count: with
    // keys of other masters in the same tick, the whole pipeline failed (seen on three masters).
    const other = testClient({ enableAutoPipelining: true });
    const sub = fs.mkdtempSync(path.join(os.tmpdir(), 'lua-'));
    try {
      await other.ping();
      fs.writeFileSync(path.join(sub, 'count-keys-n.lua'), "#!lua\nredis.call('SET', KEYS[1], ARGV[1]) return #KEYS");
      loadLuaCommands(other, sub);
      const countKeys = (
        other as unknown as { countKeys(n: number, ...args: string[]): Promise<number> }
      ).countKeys.bind(other);
      // Tags spread over the slot space, so over every master of a cluster.
      const tags = Array.from({ length: 24 }, (_, i) => `${prefix}:{t${i}}`);
      const calls = tags.flatMap((t) => [other.set(`${t}:plain`, 'p'), countKeys(2, `${t}:a`, `${t}:b`, 'v')]);
      await expect(Promise.all(calls)).resolves.toEqual(tags.flatMap(() => ['OK', 2]));
      expect(await Promise.all(tags.map((t) => other.get(`${t}:a`)))).toEqual(tags.map(() => 'v'));
    } finally {
      fs.rmSync(sub, { recursive: true, force: true });
      await other.quit();
    }
  });
});
