import { createClient } from 'redis';
import type { RedisConnection } from 'redis-om';

/**
 * Opens the node-redis v4 connection redis-om reads through. The offline queue is off, so a
 * Redis outage fails a request fast (503) instead of hanging it.
 */
export async function openOmConnection(url: string, onError: (err: Error) => void): Promise<RedisConnection> {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000) },
  });
  client.on('error', onError);
  await client.connect();
  return client as unknown as RedisConnection;
}

/** Closes a connection opened by {@link openOmConnection}. */
export async function closeOmConnection(om: RedisConnection): Promise<void> {
  const c = om as unknown as { isOpen: boolean; quit(): Promise<unknown>; disconnect(): Promise<unknown> };
  if (!c.isOpen) return;
  await c.quit().catch(() => c.disconnect().catch(() => undefined));
}
