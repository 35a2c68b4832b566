// Test helper (not a spec): proves that no issued raw key was ever stored in Redis.
import { scanKeys } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';

/** Every value (and member, field, stream entry) stored under `prefix:`, as text (keys on every master). */
export async function dumpPrefix(redis: RedisClient, prefix: string): Promise<{ key: string; text: string }[]> {
  const out: { key: string; text: string }[] = [];
  for (const key of await scanKeys(redis, `${prefix}:*`)) {
    const type = await redis.type(key);
    let value: unknown;
    if (type === 'string') value = await redis.getBuffer(key).then((b) => b?.toString('latin1'));
    else if (type === 'hash') value = await redis.hgetall(key);
    else if (type === 'list') value = await redis.lrange(key, 0, -1);
    else if (type === 'set') value = await redis.smembers(key);
    else if (type === 'zset') value = await redis.zrange(key, 0, -1);
    else if (type === 'stream') value = await redis.xrange(key, '-', '+');
    else value = `<${type}>`;
    out.push({ key, text: `${key} ${JSON.stringify(value)}` });
  }
  return out;
}

/** Fails when any stored key name or value under `prefix:` contains one of `rawKeys`. */
export async function assertNoRawKeysStored(
  redis: RedisClient,
  prefix: string,
  rawKeys: readonly string[],
): Promise<void> {
  const dump = await dumpPrefix(redis, prefix);
  expect(dump.length).toBeGreaterThan(0);
  const leaks = dump
    .filter((d) => rawKeys.some((k) => d.text.includes(k) || d.text.includes(k.slice(5))))
    .map((d) => d.key);
  expect(leaks).toEqual([]);
}
