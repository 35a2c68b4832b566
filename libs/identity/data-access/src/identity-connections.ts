import type { RedisConnection } from 'redis-om';
import { connectRedis, throttledErrorLog, withCallTimeout } from '@proofline/shared-redis';
import type { RedisClient, RedisDeployment } from '@proofline/shared-redis';
import { closeOmConnection, openOmConnection } from './om-connection';

/** The connections the identity scope needs besides the app's command connection. */
export interface IdentityConnections {
  /**
   * Pub/sub for key invalidations, retrying forever (a subscription must survive a Redis
   * restart); also what the key queue's event reader is duplicated from. An app may subscribe it
   * to other channels (GraphQL's block events).
   */
  readonly subscriber: RedisClient;
  /** redis-om's node-redis client, every call bounded by the command timeout. */
  readonly om: RedisConnection;
  /** Closes both (the om client first); never throws. */
  close(): Promise<void>;
}

/**
 * Opens the identity connections of an app's composition root on the deployment it resolved.
 * Connection errors go to `warn`, at most one line per connection every ten seconds. When the om
 * client cannot connect, the subscriber is closed again and the error thrown: a failed attempt
 * leaves nothing reconnecting.
 */
export async function openIdentityConnections(
  deployment: RedisDeployment,
  o: { commandTimeoutMs: number; warn: (fields: { err: string; repeated: number }, msg: string) => void },
): Promise<IdentityConnections> {
  const subscriber = connectRedis(deployment, { maxRetriesPerRequest: null });
  subscriber.on('error', throttledErrorLog(o.warn, 'redis subscriber error'));
  let om: RedisConnection;
  try {
    // node-redis has no command timeout: every redis-om call is bounded like an ioredis command.
    om = withCallTimeout(
      await openOmConnection(deployment, throttledErrorLog(o.warn, 'redis-om connection error')),
      o.commandTimeoutMs,
    );
  } catch (err) {
    subscriber.disconnect();
    throw err;
  }
  return {
    subscriber,
    om,
    close: async () => {
      await closeOmConnection(om).catch(() => undefined);
      subscriber.disconnect();
    },
  };
}
