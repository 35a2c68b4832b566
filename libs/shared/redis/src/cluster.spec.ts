/**
 * The connection factory against real servers: what it detects, that a cluster client reaches
 * every master, that a request-path command waiting for a cluster that is down is bounded and
 * never sent late, and that the NAT map is applied. Private redis-servers are started here for
 * what the shared test Redis cannot show (a standalone server next to a cluster, a node killed
 * and restarted, a node announcing an address nobody can dial).
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import {
  connectRedis,
  deleteByPrefix,
  knownDown,
  masters,
  pingMasters,
  requestPathOptions,
  scanKeys,
} from './connection';
import type { RedisClient } from './connection';
import { slotOf } from './keys';
import { clusterDeployment, clusterEnabledAt, resolveRedis } from './topology';
import type { RedisDeployment } from './topology';
import { testDeployment, testScope } from './testing/test-redis';

jest.setTimeout(60_000);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function until(probe: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One redis-server on a fixed port and directory (AOF fsync always), startable again after a kill. */
class Server {
  child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    readonly dir: string,
    private readonly args: string[],
  ) {}
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
  static async create(args: string[] = []): Promise<Server> {
    return new Server(await freePort(), fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-factory-')), args);
  }
  async start(): Promise<void> {
    this.child = spawn(
      'redis-server',
      [
        ...['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', ''],
        ...['--appendonly', 'yes', '--appendfsync', 'always', ...this.args],
      ],
      { stdio: 'ignore' },
    );
    const probe = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    try {
      await until(async () => {
        if (probe.status !== 'ready') await probe.connect();
        return (await probe.ping()) === 'PONG';
      });
    } finally {
      probe.disconnect();
    }
  }
  async kill(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  }
  async dispose(): Promise<void> {
    await this.kill();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A one-node cluster holding every slot (what `PROOFLINE_TEST_REDIS=cluster1` starts). It announces
 * 127.0.0.1 unless `args` say otherwise: a lone node knows no address of its own, and cluster
 * clients skip a node announced without one.
 */
async function oneNodeCluster(args: string[] = ['--cluster-announce-ip', '127.0.0.1']): Promise<Server> {
  const node = await Server.create(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', ...args]);
  await node.start();
  const r = new Redis(node.url);
  try {
    await r.cluster('ADDSLOTSRANGE', 0, 16383);
    await until(async () => (await r.cluster('INFO')).includes('cluster_state:ok'));
  } finally {
    r.disconnect();
  }
  return node;
}

/** Three masters (slots split by redis-cli), each announcing 127.0.0.1. */
async function threeNodeCluster(): Promise<Server[]> {
  const nodes: Server[] = [];
  for (let i = 0; i < 3; i++) {
    const node = await Server.create(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf']);
    await node.start();
    nodes.push(node);
  }
  execFileSync('redis-cli', [
    ...['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`)],
    ...['--cluster-replicas', '0', '--cluster-yes'],
  ]);
  for (const node of nodes) {
    const r = new Redis(node.url);
    try {
      await until(async () => (await r.cluster('INFO')).includes('cluster_state:ok'));
    } finally {
      r.disconnect();
    }
  }
  return nodes;
}

/** The deployment of private cluster nodes, as `resolveRedis` would give it. */
function testDeploymentOf(nodes: readonly Server[]): RedisDeployment {
  return clusterDeployment(
    nodes[0]!.url,
    nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
  );
}

describe('resolveRedis: one server or a cluster', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) await s.dispose();
  });

  it('asks the URL (INFO cluster): a standalone server, a cluster node; named nodes need no answer', async () => {
    const plain = await Server.create();
    servers.push(plain);
    await plain.start();
    const node = await oneNodeCluster();
    servers.push(node);
    expect(await clusterEnabledAt(plain.url)).toBe(false);
    expect(await clusterEnabledAt(node.url)).toBe(true);
    expect(await resolveRedis({ url: plain.url })).toEqual({ kind: 'standalone', url: plain.url });
    expect(await resolveRedis({ url: node.url })).toEqual({
      kind: 'cluster',
      url: node.url,
      startupNodes: [{ host: '127.0.0.1', port: node.port }],
      natMap: undefined,
      auth: { tls: false },
    });
    // The URL's user, password and TLS go to every node.
    expect(clusterDeployment('rediss://u:p%40ss@10.0.0.1:7000', [{ host: '10.0.0.2', port: 7001 }]).auth).toEqual({
      username: 'u',
      password: 'p@ss',
      tls: true,
    });
    // Named nodes: a cluster without asking (nothing listens on port 1).
    const named = await resolveRedis({ url: 'rediss://127.0.0.1:1', clusterNodes: [{ host: 'a', port: 7000 }] });
    expect(named).toMatchObject({ kind: 'cluster', startupNodes: [{ host: 'a', port: 7000 }], auth: { tls: true } });
    // Nothing answers: rejected (not cached: the next call asks again).
    const dead = `redis://127.0.0.1:${await freePort()}`;
    await expect(resolveRedis({ url: dead }, 300)).rejects.toThrow();
    await expect(resolveRedis({ url: `redis://127.0.0.1:${node.port}/2` })).rejects.toThrow(/only database 0/);
  });
});

describe('a client of the test Redis through the factory (standalone, one node or three masters)', () => {
  const { prefix, redis, cleanup } = testScope('factory');
  afterAll(cleanup);

  it('is the client the topology needs, and KEYS, scanKeys and deleteByPrefix see every master', async () => {
    const cluster = testDeployment().kind === 'cluster';
    expect(redis instanceof Cluster).toBe(cluster);
    const keys = Array.from({ length: 24 }, (_, i) => `${prefix}:{u${i}}:k`);
    for (const k of keys) await redis.set(k, '1');
    const nodes = await masters(redis);
    const counts = await Promise.all(nodes.map(async (n) => (await n.keys(`${prefix}:*`)).length));
    // On three masters, 24 tags land on more than one of them (each holds about a third).
    if (process.env['PROOFLINE_TEST_REDIS_TOPOLOGY'] === 'cluster3') {
      expect(nodes).toHaveLength(3);
      expect(counts.filter((c) => c > 0).length).toBeGreaterThan(1);
    }
    expect(counts.reduce((a, b) => a + b, 0)).toBe(24);
    expect((await redis.keys(`${prefix}:*`)).sort()).toEqual([...keys].sort());
    expect((await scanKeys(redis, `${prefix}:*`, 5)).sort()).toEqual([...keys].sort());
    expect(await deleteByPrefix(redis, prefix)).toBe(24);
    expect(await redis.keys(`${prefix}:*`)).toEqual([]);
  });
});

describe('request-path bound on a cluster that is down (ioredis#1604)', () => {
  let node: Server;
  beforeAll(async () => {
    node = await oneNodeCluster();
  });
  afterAll(async () => {
    await node.dispose();
  });

  it('a command issued while the cluster reconnects is refused after the timeout, and never sent when the cluster is back', async () => {
    const redis = connectRedis(
      { kind: 'cluster', url: node.url, startupNodes: [{ host: '127.0.0.1', port: node.port }], auth: { tls: false } },
      requestPathOptions({ commandTimeout: 800 }),
    );
    redis.on('error', () => undefined);
    try {
      expect(await redis.set('factory:{b}:before', '1')).toBe('OK');
      await node.kill();
      await until(async () => redis.status !== 'ready', 5000);
      // Readiness meanwhile: each retry is a 'connecting' phase with fresh node connections that
      // look alive; the client is still known down then, so a probe answers at once instead of
      // waiting for the cluster through its whole bound. (Sampled between I/O turns.)
      const whileConnecting: boolean[] = [];
      for (const end = Date.now() + 3000; Date.now() < end && whileConnecting.length < 3;) {
        if (redis.status === 'connecting') whileConnecting.push(knownDown(redis));
        await new Promise((r) => setImmediate(r));
      }
      expect(whileConnecting.length).toBeGreaterThan(0);
      expect(whileConnecting.filter((down) => !down)).toEqual([]);
      const t0 = Date.now();
      const late = redis.set('factory:{b}:late', '1').then(
        () => 'answered',
        (e: Error) => e.message,
      );
      expect(await late).toBe('Command timed out');
      const ms = Date.now() - t0;
      expect(ms).toBeGreaterThanOrEqual(750);
      expect(ms).toBeLessThan(1500);

      await node.start();
      await until(async () => (await redis.get('factory:{b}:before')) === '1', 15_000);
      // The refused write stayed refused: the offline queue was flushed without it.
      await new Promise((r) => setTimeout(r, 200));
      expect(await redis.get('factory:{b}:late')).toBeNull();
      expect(await redis.set('factory:{b}:after', '1')).toBe('OK');
    } finally {
      redis.disconnect();
    }
  });

  it('without the factory, the same command waits for the cluster however long it is down', async () => {
    const raw = new Cluster([{ host: '127.0.0.1', port: node.port }], {
      redisOptions: { commandTimeout: 800, maxRetriesPerRequest: 1 },
      clusterRetryStrategy: () => 100,
    });
    raw.on('error', () => undefined);
    try {
      await raw.ping();
      await node.kill();
      await until(async () => raw.status !== 'ready', 5000);
      let settled = false;
      void raw.get('factory:{b}:x').then(
        () => (settled = true),
        () => (settled = true),
      );
      await new Promise((r) => setTimeout(r, 2500));
      expect(settled).toBe(false);
    } finally {
      raw.disconnect();
      await node.start();
    }
  });
});

describe('a slot being migrated (resharding): TRYAGAIN and ASK followed within the request bound', () => {
  let nodes: Server[] = [];
  let admin: Redis[] = [];
  const slot = slotOf('{mig}');
  const a = 'factory:{mig}:a';
  const b = 'factory:{mig}:b';
  beforeAll(async () => {
    nodes = await threeNodeCluster();
    admin = nodes.map((n) => new Redis(n.url));
  });
  afterAll(async () => {
    for (const r of admin) r.disconnect();
    for (const n of nodes) await n.dispose();
  });

  /** The slot's owner and another master, their ids, with `a` moved: `MSET a b` gets TRYAGAIN until the slot is done. */
  async function halfMoved(redis: RedisClient): Promise<() => Promise<void>> {
    const ids = await Promise.all(admin.map(async (r) => String(await r.cluster('MYID'))));
    const range = (await admin[0]!.cluster('SLOTS')).find(([first, last]) => slot >= first && slot <= last);
    const ownerId = range?.[2]?.[2] ?? '';
    const from = ids.indexOf(ownerId);
    const to = (from + 1) % ids.length;
    await redis.del(a, b);
    expect(await redis.set(a, '0')).toBe('OK');
    await admin[to]!.cluster('SETSLOT', slot, 'IMPORTING', ids[from]!);
    await admin[from]!.cluster('SETSLOT', slot, 'MIGRATING', ids[to]!);
    await admin[from]!.migrate('127.0.0.1', nodes[to]!.port, '', 0, 5000, 'KEYS', a);
    return async () => {
      for (const i of [to, from, 3 - to - from]) await admin[i]!.cluster('SETSLOT', slot, 'NODE', ids[to]!);
    };
  }

  it('a multi-key command retries TRYAGAIN until the slot has moved, within the timeout', async () => {
    const redis = connectRedis(testDeploymentOf(nodes), requestPathOptions());
    try {
      const finish = await halfMoved(redis);
      const t0 = Date.now();
      const written = redis.mset(a, '1', b, '1');
      // ioredis' default (16 redirections, 100 ms apart, about three a round) gave up after ~0.5 s.
      await new Promise((r) => setTimeout(r, 700));
      await finish();
      // Answered within the request bound (REQUEST_COMMAND_TIMEOUT_MS), else it would be "Command timed out".
      expect(await written).toBe('OK');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
      expect(await redis.mget(a, b)).toEqual(['1', '1']);
    } finally {
      redis.disconnect();
    }
  });

  it('a command refused after its timeout is not sent again once the slot has moved', async () => {
    const redis = connectRedis(testDeploymentOf(nodes), requestPathOptions({ commandTimeout: 300 }));
    try {
      const finish = await halfMoved(redis);
      const answer = await redis.mset(a, '2', b, '2').then(
        () => 'answered',
        (e: Error) => e.message,
      );
      expect(answer).toBe('Command timed out');
      await finish();
      // ioredis would keep following TRYAGAIN for its redirections and write once the slot is stable.
      await new Promise((r) => setTimeout(r, 2000));
      expect(await redis.mget(a, b)).toEqual(['0', null]);
    } finally {
      redis.disconnect();
    }
  });
});

describe('one master of three gone', () => {
  let nodes: Server[] = [];
  beforeAll(async () => {
    nodes = await threeNodeCluster();
  });
  afterAll(async () => {
    for (const n of nodes) await n.dispose();
  });

  it('is known at once (readiness: a lost connection, or a refused ping), its slots answer within the timeout, the other masters keep serving', async () => {
    const [first, second] = nodes;
    if (!first || !second) throw new Error('no nodes');
    const deployment = {
      kind: 'cluster' as const,
      url: first.url,
      startupNodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
      auth: { tls: false },
    };
    const redis = connectRedis(deployment, requestPathOptions({ commandTimeout: 800 }));
    redis.on('error', () => undefined);
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `gone:{g${i}}`);
      for (const k of keys) await redis.set(k, '1');
      expect(knownDown(redis)).toBe(false);
      // The keys each master holds (asked of each node directly).
      const held = async (n: Server) => {
        const r = new Redis(n.url);
        try {
          return await r.keys('gone:*');
        } finally {
          r.disconnect();
        }
      };
      const onSecond = await held(second);
      const elsewhere = keys.filter((k) => !onSecond.includes(k));
      expect(onSecond.length).toBeGreaterThan(0);
      await second.kill();
      await until(async () => knownDown(redis), 2000);
      const t0 = Date.now();
      const lost = await redis.get(onSecond[0] ?? '').then(
        () => 'answered',
        (e: Error) => e.message,
      );
      expect(lost).toMatch(/Command timed out|Connection is closed|Too many Cluster redirections/);
      expect(Date.now() - t0).toBeLessThan(1500);
      for (const k of elsewhere.slice(0, 5)) expect(await redis.get(k)).toBe('1');
      // A client that never needed the lost master holds no connection to lose: readiness pings
      // every master directly, and the refused one fails at once.
      const fresh = connectRedis(deployment, requestPathOptions({ commandTimeout: 800 }));
      fresh.on('error', () => undefined);
      try {
        await fresh.get(elsewhere[0] ?? '');
        expect(knownDown(fresh)).toBe(false);
        const t1 = Date.now();
        await expect(pingMasters(fresh)).rejects.toThrow();
        expect(Date.now() - t1).toBeLessThan(500);
      } finally {
        fresh.disconnect();
      }
      await second.start();
      await until(async () => (await redis.get(onSecond[0] ?? '')) === '1', 20_000);
      await until(async () => !knownDown(redis), 5000);
    } finally {
      redis.disconnect();
    }
  });
});

describe('NAT map', () => {
  let node: Server;
  beforeAll(async () => {
    // The node announces an address of TEST-NET-3 (RFC 5737): no client can dial it.
    node = await oneNodeCluster(['--cluster-announce-ip', '203.0.113.7']);
  });
  afterAll(async () => {
    await node.dispose();
  });

  it('translates the addresses the nodes announce to the ones the client can reach', async () => {
    const deployment = {
      kind: 'cluster' as const,
      url: node.url,
      startupNodes: [{ host: '127.0.0.1', port: node.port }],
      auth: { tls: false },
    };
    const mapped = connectRedis(
      { ...deployment, natMap: { [`203.0.113.7:${node.port}`]: { host: '127.0.0.1', port: node.port } } },
      requestPathOptions({ commandTimeout: 800 }),
    );
    const unmapped = connectRedis(deployment, requestPathOptions({ commandTimeout: 800, connectTimeout: 300 }));
    for (const c of [mapped, unmapped]) c.on('error', () => undefined);
    try {
      expect(await mapped.set('nat:{x}:k', 'v')).toBe('OK');
      expect(await mapped.get('nat:{x}:k')).toBe('v');
      await expect(unmapped.get('nat:{x}:k')).rejects.toThrow();
    } finally {
      mapped.disconnect();
      unmapped.disconnect();
    }
  });
});
