import { openIdentityConnections } from '@proofline/identity-data-access';
import type { RedisClient, RedisDeployment } from '@proofline/shared-redis';
import { createIdentity } from './create-identity';
import type { Identity, IdentityOptions } from './create-identity';

/** The identity scope an app owns with its connections (see {@link openIdentity}). */
export interface OwnedIdentity extends Identity {
  /**
   * The pub/sub connection key invalidations arrive on; the app may listen to other channels on it
   * (the GraphQL app's block events). Closed by `close`.
   */
  readonly subscriber: RedisClient;
}

/**
 * The identity scope of an app's composition root, on identity connections of its own
 * (`openIdentityConnections` on `deployment`: a subscriber, whose copy the key queue's event reader
 * also is, and redis-om's client) beside the app's command connection `redis`. `close` closes the
 * scope, then those connections, never `redis`. When the scope cannot be created (Redis went away),
 * the connections are closed again and the error thrown: nothing is left reconnecting.
 */
export async function openIdentity(
  deployment: RedisDeployment,
  o: Omit<IdentityOptions, 'connections'> & { readonly redis: RedisClient },
): Promise<OwnedIdentity> {
  const { redis, ...options } = o;
  // redis-om calls are bounded like the app's commands (REDIS_COMMAND_TIMEOUT_MS).
  const connections = await openIdentityConnections(deployment, {
    commandTimeoutMs: o.config.redisCommandTimeoutMs,
    warn: (f, m) => o.logger.warn(f, m),
  });
  const { subscriber, om } = connections;
  let identity: Identity;
  try {
    identity = await createIdentity({ ...options, connections: { redis, om, subscriber, bull: subscriber } });
  } catch (err) {
    await connections.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  const close = async () => {
    await identity.close();
    await connections.close();
  };
  return { ...identity, subscriber, close: () => (closing ??= close()) };
}
