import { createClient, createCluster } from 'redis';
import type { RedisConnection } from 'redis-om';
import type { RedisDeployment } from '@proofline/shared-redis';

/** Socket settings of every node connection: a Redis outage fails a request fast (503) instead of hanging it. */
const SOCKET = {
  connectTimeout: 2000,
  reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000),
} as const;

/**
 * Opens the node-redis v4 connection redis-om reads through: a client of the one server, or on a
 * cluster deployment a `createCluster` client (masters only, the URL's user, password and TLS on
 * every node, the deployment's NAT map as `nodeAddressMap`). The offline queue is off, so a Redis
 * outage fails a request fast (503) instead of hanging it.
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
  } catch (e) {
    await cluster.disconnect().catch(() => undefined);
    throw e;
  }
  return cluster as unknown as RedisConnection;
}

/** Closes a connection opened by {@link openOmConnection}. */
export async function closeOmConnection(om: RedisConnection): Promise<void> {
  const c = om as unknown as { isOpen: boolean; quit(): Promise<unknown>; disconnect(): Promise<unknown> };
  if (!c.isOpen) return;
  await c.quit().catch(() => c.disconnect().catch(() => undefined));
}
