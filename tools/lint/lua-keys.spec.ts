/**
 * Every Lua script of the service can run on a Redis Cluster (CLUSTER.md, rules 1-2): it starts
 * with `#!lua` and takes every key it touches in KEYS (lua-keys.ts). Prelude files (a `.lua`
 * without a key count in its name, pasted into scripts after the shebang) are not scripts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkLuaScript, isScriptFile, stripLua } from './lua-keys';

const ROOT = path.resolve(__dirname, '../..');

function luaFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...luaFiles(full));
    else if (entry.name.endsWith('.lua')) out.push(full);
  }
  return out;
}

describe('Lua scripts on a Redis Cluster', () => {
  const scripts = ['apps', 'libs']
    .flatMap((d) => luaFiles(path.join(ROOT, d)))
    .filter((f) => isScriptFile(path.basename(f)))
    .sort();

  it('finds the scripts (and leaves the preludes out)', () => {
    expect(scripts.length).toBeGreaterThan(20);
    expect(scripts.some((f) => f.endsWith('block-members.lua'))).toBe(false);
  });

  it('every script starts with #!lua and touches only keys it takes in KEYS', () => {
    const findings = scripts.flatMap((file) =>
      checkLuaScript(fs.readFileSync(file, 'utf8')).map((f) => `${path.relative(ROOT, file)}:${f.line}: ${f.message}`),
    );
    expect(findings).toEqual([]);
  });
});

describe('the check itself (it must be able to fail)', () => {
  const ok = (body: string) => checkLuaScript(`#!lua\n${body}`);

  it('passes keys from KEYS: indexed, bound to locals, looped over, unpacked, or a helper parameter', () => {
    expect(
      ok(`
local rec, chain = KEYS[1], KEYS[2]
local n = redis.call('HINCRBY', rec, 'n', 1)
redis.call('RPUSH', chain, ARGV[1] .. ':' .. n)
for _, k in ipairs(KEYS) do redis.call('DEL', k) end
for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[1]) end
local function bump(key, by) return redis.call('INCRBY', key, by) end
bump(KEYS[3], 2)
redis.call('DEL', unpack(KEYS))
redis.call('PUBLISH', ARGV[2] .. ':events', 'x') -- a channel is no key
redis.call('ZADD', KEYS[1], ARGV[3], '(' .. ARGV[4])
local K = KEYS
redis.call('GET', K[2])
local id, blockKey = ARGV[1], KEYS[tonumber(ARGV[2])]
redis.call('SADD', blockKey, id)
local function apply(T, k) redis.call('HSET', T[k + 1], 'f', 1) end
apply(KEYS, 1)
local b = { key = KEYS[1], n = 1 }
redis.call('SET', b.key, b.n) -- key from KEYS
`),
    ).toEqual([]);
  });

  it('reports a missing shebang, keys built from ARGV or read from Redis, and dynamic command names', () => {
    const findings = checkLuaScript(`-- no shebang
local prefix = ARGV[1]
redis.call('GET', ARGV[1] .. ':x')
redis.call('HGET', prefix .. KEYS[1], 'f')
local other = redis.call('HGET', KEYS[1], 'next')
redis.call('EXISTS', KEYS[1], other)
local k = KEYS[1]
k = k .. ':tail'
redis.call('GET', k)
local cmd = ARGV[2]
redis.call(cmd, KEYS[1])
local t = { key = KEYS[1] }
redis.call('SET', t.key, 1)
`);
    expect(findings.map((f) => [f.line, f.message.split(':')[0]])).toEqual([
      [1, 'the first line is not #!lua'],
      [3, 'GET on a key not from KEYS'],
      [4, 'HGET on a key not from KEYS'],
      [6, 'EXISTS on a key not from KEYS'],
      [9, 'GET on a key not from KEYS'],
      [11, 'a command whose name is not a literal'],
      [13, 'SET on a key not from KEYS'],
    ]);
  });

  it('reads past comments and strings', () => {
    expect(stripLua("--[[ redis.call('GET', x) ]] local s = 'a -- b'\n-- redis.call('GET', y)")).not.toMatch(
      /redis\.call/,
    );
    expect(ok(`--[[ ARGV[1] .. 'x' ]]\nredis.call('GET', KEYS[1]) -- redis.call('GET', ARGV[1])`)).toEqual([]);
  });
});
