// Test helper (not a spec): proves that no issued raw key was ever stored in Redis.
import { masters } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';

/**
 * Every value (and member, field, stream entry) stored under `prefix:`, as text: SCAN on every
 * master (a cluster client's SCAN would walk one node only), each key read from its node.
 */
export async function dumpPrefix(redis: RedisClient, prefix: string): Promise<{ key: string; text: string }[]> {
  const out: { key: string; text: string }[] = [];
  for (const node of await masters(redis)) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      for (const key of batch) {
        const type = await node.type(key);
        let value: unknown;
        if (type === 'string') value = await node.getBuffer(key).then((b) => b?.toString('latin1'));
        else if (type === 'hash') value = await node.hgetall(key);
        else if (type === 'list') value = await node.lrange(key, 0, -1);
        else if (type === 'set') value = await node.smembers(key);
        else if (type === 'zset') value = await node.zrange(key, 0, -1);
        else if (type === 'stream') value = await node.xrange(key, '-', '+');
        else value = `<${type}>`;
        out.push({ key, text: `${key} ${JSON.stringify(value)}` });
      }
    } while (cursor !== '0');
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
