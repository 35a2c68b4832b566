import { Redis } from 'ioredis';

/** A cluster node address as Redis announces it or an operator names it. */
export interface NodeAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Address translation for a cluster behind NAT or in containers: the nodes announce addresses
 * (`CLUSTER SLOTS`, `MOVED`) the client cannot reach; each announced `host:port` maps to the one
 * to dial. ioredis takes it as `natMap`, node-redis as `nodeAddressMap`.
 */
export type NatMap = Readonly<Record<string, NodeAddress>>;

/**
 * Where the service's Redis is, as configured: `url` (`REDIS_URL`: one server, or any node of a
 * cluster; its user, password and `rediss:` TLS apply to every node), optionally the cluster's
 * nodes by name (`REDIS_CLUSTER_NODES`, which makes it a cluster without asking) and the NAT map
 * (`REDIS_CLUSTER_NAT_MAP`).
 */
export interface RedisTarget {
  readonly url: string;
  readonly clusterNodes?: readonly NodeAddress[] | undefined;
  readonly natMap?: NatMap | undefined;
}

/** The target a configuration names (`REDIS_URL`, `REDIS_CLUSTER_NODES`, `REDIS_CLUSTER_NAT_MAP`). */
export function redisTargetOf(config: {
  readonly redisUrl: string;
  readonly redisCluster?: { readonly nodes?: readonly NodeAddress[] | undefined; readonly natMap?: NatMap | undefined };
}): RedisTarget {
  return { url: config.redisUrl, clusterNodes: config.redisCluster?.nodes, natMap: config.redisCluster?.natMap };
}

/** The connection settings that every node of a deployment shares (from the URL). */
export interface NodeAuth {
  readonly username?: string;
  readonly password?: string;
  /** `rediss:` URL: TLS to every node. */
  readonly tls: boolean;
}

/** A single Redis server (or a replica set's primary behind one address). */
export interface StandaloneDeployment {
  readonly kind: 'standalone';
  readonly url: string;
}

/** A Redis Cluster: the nodes a client starts from (it discovers the rest), the NAT map and the auth of every node. */
export interface ClusterDeployment {
  readonly kind: 'cluster';
  readonly url: string;
  readonly startupNodes: readonly NodeAddress[];
  readonly natMap?: NatMap | undefined;
  readonly auth: NodeAuth;
}

/** A target whose kind is known: what the connection factory builds clients from. */
export type RedisDeployment = StandaloneDeployment | ClusterDeployment;

/** The user, password and TLS a URL names (applied to every node of a cluster). */
export function authOf(url: string): NodeAuth {
  const u = new URL(url);
  return {
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    tls: u.protocol === 'rediss:',
  };
}

/** The deployment a target names without asking the server (a cluster only when its nodes are named). */
function named(target: RedisTarget): RedisDeployment | undefined {
  if (!target.clusterNodes || target.clusterNodes.length === 0) return undefined;
  return clusterOf(target, target.clusterNodes);
}

function clusterOf(target: RedisTarget, startupNodes: readonly NodeAddress[]): ClusterDeployment {
  return clusterDeployment(target.url, startupNodes, target.natMap);
}

/**
 * A cluster deployment known without asking (the nodes are named): `url` carries the user,
 * password and TLS of every node. Throws when the URL names a database other than 0 (a cluster
 * has only database 0).
 */
export function clusterDeployment(
  url: string,
  startupNodes: readonly NodeAddress[],
  natMap?: NatMap,
): ClusterDeployment {
  const db = new URL(url).pathname.replace(/^\//, '');
  if (db !== '' && db !== '0')
    throw new Error(`a Redis Cluster has only database 0: the URL names database ${db} (use REDIS_PREFIX instead)`);
  return { kind: 'cluster', url, startupNodes, natMap, auth: authOf(url) };
}

/** True when the server at `url` runs in cluster mode (`INFO cluster` says `cluster_enabled:1`). */
export async function clusterEnabledAt(url: string, timeoutMs = 2000): Promise<boolean> {
  // Database 0: a cluster node refuses SELECT, and the question is only whether it is one.
  const u = new URL(url);
  u.pathname = '';
  const probe = new Redis(u.toString(), {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return /^cluster_enabled:1\s*$/m.test(await probe.info('cluster'));
  } finally {
    probe.disconnect();
  }
}

const resolved = new Map<string, Promise<RedisDeployment>>();

/**
 * The deployment behind `target`: a cluster when its nodes are named, else whatever the server at
 * the URL says it is (`INFO cluster`; one connection, once per process and target: the answer is
 * cached, a failure is not). Rejects when the server does not answer within `timeoutMs`.
 */
export function resolveRedis(target: RedisTarget, timeoutMs = 2000): Promise<RedisDeployment> {
  const fixed = named(target);
  if (fixed) return Promise.resolve(fixed);
  const key = JSON.stringify([target.url, target.natMap ?? null]);
  let pending = resolved.get(key);
  if (!pending) {
    const startupNodes = [nodeOfUrl(target.url)];
    pending = clusterEnabledAt(target.url, timeoutMs).then((cluster): RedisDeployment =>
      cluster ? clusterOf(target, startupNodes) : { kind: 'standalone', url: target.url },
    );
    pending.catch(() => resolved.delete(key));
    resolved.set(key, pending);
  }
  return pending;
}

/**
 * {@link resolveRedis}, retried every `retryMs` until the server answers: for a process that
 * starts before Redis (it listens not-ready meanwhile). `onRetry` sees each failure.
 */
export async function waitForRedis(
  target: RedisTarget,
  onRetry: (err: Error, attempt: number) => void = () => undefined,
  retryMs = 250,
): Promise<RedisDeployment> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await resolveRedis(target);
    } catch (e) {
      onRetry(e instanceof Error ? e : new Error(String(e)), attempt);
      await new Promise((r) => setTimeout(r, retryMs));
    }
  }
}

/**
 * Runs `compose` (an app's composition root) until it succeeds, every `retryMs`, for as long as
 * `stopping()` is false: a process that listens before Redis answers (one server, or a cluster
 * still forming) composes once it does. Undefined when it stopped first. The first failure and
 * every 40th are passed to `warn`, so a long outage logs a line every ten seconds, not four a second.
 */
export async function composeWhenRedisAnswers<T>(
  compose: () => Promise<T>,
  o: {
    stopping: () => boolean;
    warn: (fields: { err: string; attempt: number }, msg: string) => void;
    retryMs: number;
  },
): Promise<T | undefined> {
  for (let attempt = 1; !o.stopping(); attempt++) {
    try {
      return await compose();
    } catch (err) {
      if (attempt === 1 || attempt % 40 === 0)
        o.warn(
          { err: err instanceof Error ? err.message : String(err), attempt },
          'not ready: composing the app failed (is Redis reachable?); retrying',
        );
      await new Promise((r) => setTimeout(r, o.retryMs));
    }
  }
  return undefined;
}

function nodeOfUrl(url: string): NodeAddress {
  const u = new URL(url);
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return { host: host || '127.0.0.1', port: Number(u.port || 6379) };
}

/** `host:port` of each startup node (for logs and child processes' `REDIS_CLUSTER_NODES`). */
export function describeDeployment(d: RedisDeployment): string {
  if (d.kind === 'standalone') return 'standalone';
  return `cluster (from ${d.startupNodes.map((n) => `${n.host}:${n.port}`).join(',')})`;
}
