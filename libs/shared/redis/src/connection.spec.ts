import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { coalesceWrites, createRedis } from './connection';
import { testClient, testRedisUrl } from './testing/test-redis';

/**
 * A hash tag whose keys the server at `url` holds: any tag on one server; on a cluster node, one of
 * a slot that node serves (these specs talk to it over a plain connection, as a cluster client's
 * node connections do).
 */
async function tagServedBy(url: string): Promise<string> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await r.connect();
    if (!/^cluster_enabled:1/m.test(await r.info('cluster'))) return 'c';
    const port = Number(new URL(url).port);
    const ranges = ((await r.cluster('SLOTS')) as unknown as [number, number, [string, number]][]).filter(
      ([, , [, p]]) => p === port,
    );
    for (let i = 0; ; i++) {
      const slot = Number(await r.cluster('KEYSLOT', `{c${i}}`));
      if (ranges.some(([from, to]) => slot >= from && slot <= to)) return `c${i}`;
    }
  } finally {
    r.disconnect();
  }
}

/** A TCP proxy in front of the test Redis that counts the chunks each client connection sends. */
async function countingProxy(): Promise<{
  url: string;
  chunks: () => number;
  dropClients: () => void;
  close: () => Promise<void>;
}> {
  const target = new URL(testRedisUrl());
  let chunks = 0;
  const clients = new Set<Socket>();
  const server: Server = createServer((client) => {
    clients.add(client);
    const upstream = connect(Number(target.port), target.hostname);
    client.on('data', (d) => {
      chunks++;
      upstream.write(d);
    });
    upstream.on('data', (d) => client.write(d));
    const end = () => {
      clients.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    chunks: () => chunks,
    dropClients: () => {
      for (const c of clients) c.destroy();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Counts the write requests the client's current socket hands to libuv (`_write` / `_writev`). */
function countRequests(client: { stream?: unknown }): () => number {
  const stream = client.stream as { _write: (...a: unknown[]) => unknown; _writev: (...a: unknown[]) => unknown };
  let n = 0;
  for (const m of ['_write', '_writev'] as const) {
    const original = stream[m].bind(stream);
    stream[m] = (...a: unknown[]) => {
      n++;
      return original(...a);
    };
  }
  return () => n;
}

describe('coalesceWrites (real Redis behind a counting proxy)', () => {
  let prefix = `coalesce-${randomBytes(5).toString('hex')}`;
  beforeAll(async () => {
    prefix = `${prefix}:{${await tagServedBy(testRedisUrl())}}`;
  });

  it('sends the commands of one turn in one write, in order, each with its own reply; again after a reconnection', async () => {
    const proxy = await countingProxy();
    const redis = coalesceWrites(createRedis(proxy.url, { maxRetriesPerRequest: 2, retryStrategy: () => 20 }));
    try {
      await redis.ping();
      const burst = async () => {
        const before = proxy.chunks();
        const replies = await Promise.all([
          ...Array.from({ length: 40 }, (_, i) => redis.set(`${prefix}:k${i}`, String(i))),
          redis.pipeline().incr(`${prefix}:n`).incr(`${prefix}:n`).exec(),
          ...Array.from({ length: 40 }, (_, i) => redis.get(`${prefix}:k${i}`)),
        ]);
        return { sent: proxy.chunks() - before, replies };
      };
      const first = await burst();
      expect(first.replies.slice(0, 40)).toEqual(Array.from({ length: 40 }, () => 'OK'));
      expect(first.replies[40]).toEqual([
        [null, 1],
        [null, 2],
      ]);
      expect(first.replies.slice(41)).toEqual(Array.from({ length: 40 }, (_, i) => String(i)));
      // 81 commands, one turn: one write (two at most, should the proxy read it in two parts)
      expect(first.sent).toBeLessThanOrEqual(2);

      // a new socket after the connection dropped is coalesced too
      proxy.dropClients();
      await new Promise((r) => setTimeout(r, 100));
      await redis.ping();
      const second = await burst();
      expect(second.replies.slice(41)).toEqual(Array.from({ length: 40 }, (_, i) => String(i)));
      expect(second.sent).toBeLessThanOrEqual(2);
    } finally {
      await redis.del(...Array.from({ length: 40 }, (_, i) => `${prefix}:k${i}`), `${prefix}:n`);
      redis.disconnect();
      await proxy.close();
    }
  });

  it('counted at the socket: one write request per turn with it, one per command without', async () => {
    const plain = createRedis(testRedisUrl(), { maxRetriesPerRequest: 2, enableAutoPipelining: false });
    const merged = coalesceWrites(
      createRedis(testRedisUrl(), { maxRetriesPerRequest: 2, enableAutoPipelining: false }),
    );
    try {
      await Promise.all([plain.ping(), merged.ping()]);
      const burst = (r: typeof plain) => Promise.all(Array.from({ length: 40 }, (_, i) => r.get(`${prefix}:none${i}`)));
      const plainCount = countRequests(plain as unknown as { stream?: unknown });
      const mergedCount = countRequests(merged as unknown as { stream?: unknown });
      await Promise.all([burst(plain), burst(merged)]);
      expect(plainCount()).toBeGreaterThanOrEqual(40);
      expect(mergedCount()).toBe(1);
    } finally {
      plain.disconnect();
      merged.disconnect();
    }
  });

  it('on a client of the factory (a cluster: each node connection), one write request per node and turn', async () => {
    const merged = coalesceWrites(testClient({ maxRetriesPerRequest: 2, enableAutoPipelining: false }));
    try {
      await merged.ping();
      const nodes = merged instanceof Redis ? [merged] : merged.nodes('master');
      // Keys of many slots: on three masters every node gets some of the burst.
      const keys = Array.from({ length: 60 }, (_, i) => `coalesce-spread:{s${i}}:none`);
      await Promise.all(keys.map((k) => merged.get(k))); // every node connected (and patched)
      const counts = nodes.map((n) => countRequests(n as unknown as { stream?: unknown }));
      await Promise.all(keys.map((k) => merged.get(k)));
      for (const count of counts) expect(count()).toBeLessThanOrEqual(1);
      expect(counts.reduce((sum, c) => sum + c(), 0)).toBe(nodes.length);
    } finally {
      merged.disconnect();
    }
  });
});
