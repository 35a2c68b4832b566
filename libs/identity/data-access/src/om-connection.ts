import { createClient, createCluster } from 'redis';
import type { RedisConnection } from 'redis-om';
import type { ClusterDeployment, RedisDeployment } from '@proofline/shared-redis';

/** Socket settings of every node connection: a Redis outage fails a request fast (503) instead of hanging it. */
const SOCKET = {
  connectTimeout: 2000,
  reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000),
} as const;

/** Hash slots of a Redis Cluster. */
const SLOT_COUNT = 16384;

/** How long a replaced cluster client may take to finish the calls it still has before it is dropped. */
const RETIRE_MS = 1000;

/** A node-redis cluster client as `createCluster` makes it here (no modules, functions or scripts of ours). */
type Cluster = ReturnType<typeof createCluster>;

/**
 * The cluster's slot map, as node-redis learnt it, names no master for some slots: the client was
 * connected while the cluster was being created (a node not yet in a cluster answers
 * `CLUSTER SLOTS` with nothing, a node that has not met the others with its own slots only), or
 * it re-read the map from such a node. A Redis-unavailable failure (503), not a bug: the map is
 * read again.
 */
export class ClusterSlotsUncoveredError extends Error {
  override readonly name = 'ClusterSlotsUncoveredError';
  constructor(mapped: number, options?: { cause?: unknown }) {
    super(`the cluster's slot map covers ${mapped} of ${SLOT_COUNT} slots`, options);
  }
}

/** How many of the cluster's slots the client's map gives a master. */
function mappedSlots(cluster: Cluster): number {
  // A loop, not `every`: node-redis keeps the map in a sparse array, whose holes `every` skips.
  let mapped = 0;
  for (let slot = 0; slot < SLOT_COUNT; slot++) if (cluster.slots[slot]?.master) mapped += 1;
  return mapped;
}

/**
 * Opens the node-redis v4 connection redis-om reads through: a client of the one server, or on a
 * cluster deployment a `createCluster` client (masters only, the URL's user, password and TLS on
 * every node, the deployment's NAT map as `nodeAddressMap`). The offline queue is off, so a Redis
 * outage fails a request fast (503) instead of hanging it.
 *
 * On a cluster it rejects with {@link ClusterSlotsUncoveredError} unless the slot map covers every
 * slot, and the connection it returns replaces its cluster client when a call finds the map
 * incomplete. node-redis reads the map once at `connect()`, accepts whatever a node answers
 * (nothing, from a node of a cluster still being created) and reads it again only when a command
 * is answered MOVED or ASK; a command for a slot missing from the map throws a TypeError before it
 * is sent, so nothing would ever correct the map.
 */
export async function openOmConnection(
  deployment: RedisDeployment,
  onError: (err: Error) => void,
): Promise<RedisConnection> {
  if (deployment.kind === 'standalone') {
    const client = createClient({ url: deployment.url, disableOfflineQueue: true, socket: SOCKET });
    client.on('error', onError);
    await client.connect();
    return client as unknown as RedisConnection;
  }
  return renewingCluster(await openCluster(deployment, onError), deployment, onError) as unknown as RedisConnection;
}

/** A connected cluster client whose slot map covers every slot; closed again when it does not. */
async function openCluster(deployment: ClusterDeployment, onError: (err: Error) => void): Promise<Cluster> {
  const { auth, natMap } = deployment;
  const cluster = createCluster({
    rootNodes: deployment.startupNodes.map((n) => ({ socket: { host: n.host, port: n.port } })),
    defaults: {
      disableOfflineQueue: true,
      ...(auth.username ? { username: auth.username } : {}),
      ...(auth.password ? { password: auth.password } : {}),
      socket: { ...SOCKET, ...(auth.tls ? { tls: true as const } : {}) },
    },
    useReplicas: false,
    ...(natMap ? { nodeAddressMap: { ...natMap } } : {}),
  });
  cluster.on('error', onError);
  try {
    await cluster.connect();
    const mapped = mappedSlots(cluster);
    if (mapped < SLOT_COUNT) throw new ClusterSlotsUncoveredError(mapped);
  } catch (e) {
    await cluster.disconnect().catch(() => undefined);
    throw e;
  }
  return cluster;
}

/**
 * A cluster connection that stands for `first` and, once a call fails while the client's slot map
 * is incomplete, for a new client of `deployment` whose map is complete (one opening at a time; a
 * failed opening is tried again by the next failing call). Such a call rejects with
 * {@link ClusterSlotsUncoveredError}. The replaced client finishes its calls for up to
 * {@link RETIRE_MS}, then is disconnected. Closing it closes the client it stands for.
 *
 * Exported for its spec, which hands it a client connected while the cluster was being created.
 */
export function renewingCluster(first: Cluster, deployment: ClusterDeployment, onError: (err: Error) => void): Cluster {
  let current = first;
  let renewing: Promise<void> | undefined;
  let closed = false;
  const renew = (): void => {
    if (renewing || closed) return;
    renewing = openCluster(deployment, onError)
      .then(async (next) => {
        if (closed) return void (await next.disconnect().catch(() => undefined));
        const old = current;
        current = next;
        await retire(old);
      })
      .catch((e: unknown) => onError(e instanceof Error ? e : new Error(String(e))))
      .finally(() => {
        renewing = undefined;
      });
  };
  const failed = (client: Cluster, err: unknown): never => {
    if (closed) throw err;
    const mapped = mappedSlots(client);
    if (mapped === SLOT_COUNT) throw err;
    if (client === current) renew();
    throw new ClusterSlotsUncoveredError(mapped, { cause: err });
  };
  const close = async (how: 'quit' | 'disconnect'): Promise<void> => {
    closed = true;
    const client = current;
    await (how === 'quit' ? client.quit() : client.disconnect());
    // An opening under way closes its client itself when it ends (`closed`).
  };
  const bound = new WeakMap<object, unknown>();
  return new Proxy(first, {
    get(_target, property) {
      if (property === 'quit') return () => close('quit');
      if (property === 'disconnect') return () => close('disconnect');
      const client = current;
      // node-redis getters read private (#) fields: read every member on the client itself.
      const value: unknown = Reflect.get(client, property);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      const key = bound.get(fn) as WeakMap<Cluster, unknown> | undefined;
      const cached = key?.get(client);
      if (cached) return cached;
      const call = (...args: unknown[]): unknown => {
        let result: unknown;
        try {
          result = fn.apply(client, args);
        } catch (e) {
          return failed(client, e);
        }
        return result instanceof Promise ? result.catch((e: unknown) => failed(client, e)) : result;
      };
      const perClient = key ?? new WeakMap<Cluster, unknown>();
      perClient.set(client, call);
      bound.set(fn, perClient);
      return call;
    },
  });
}

/** Lets a replaced cluster client answer what it was sent, then drops it. */
async function retire(old: Cluster): Promise<void> {
  await Promise.race([old.quit().catch(() => undefined), new Promise((r) => setTimeout(r, RETIRE_MS).unref())]);
  if (old.isOpen) await old.disconnect().catch(() => undefined);
}

/** Closes a connection opened by {@link openOmConnection}. */
export async function closeOmConnection(om: RedisConnection): Promise<void> {
  const c = om as unknown as { isOpen: boolean; quit(): Promise<unknown>; disconnect(): Promise<unknown> };
  if (!c.isOpen) return;
  await c.quit().catch(() => c.disconnect().catch(() => undefined));
}
