import { identityKeys } from '@proofline/identity-data-access';
import { systemClock, loadConfig } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { masters } from '@proofline/shared-redis';
import { eventually, testRedis, testRedisDeployment, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { openIdentity } from './open-identity';

describe('openIdentity: the identity scope on connections it owns', () => {
  const prefix = uniquePrefix('idopen');
  const { redis, cleanup } = testRedis(prefix);
  const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const logger = createLogger({ level: 'silent', name: 't' });
  const channel = identityKeys(prefix).invalidationChannel;
  // PUBSUB NUMSUB counts the subscribers of the node it asks: summed over the masters of a cluster.
  const subscribers = async () => {
    let n = 0;
    for (const node of await masters(redis))
      n += Number(((await node.pubsub('NUMSUB', channel)) as [string, number])[1]);
    return n;
  };
  afterAll(cleanup);

  it('listens for key invalidations on its own subscriber, and close ends the subscriber but not the command connection', async () => {
    const identity = await openIdentity(testRedisDeployment(), {
      config,
      logger,
      clock: systemClock,
      redis,
      commandTimeoutMs: config.redisCommandTimeoutMs,
    });
    await eventually(async () => (await subscribers()) === 1);
    expect(identity.subscriber).not.toBe(redis);
    // The scope reads through its connections (redis-om for the tenant's keys).
    const caller = { keyId: 'k', tenant: 'nobody', permissions: [], source: 'identity' } as const;
    expect(await identity.keys.listKeys(caller)).toEqual([]);

    await Promise.all([identity.close(), identity.close()]);
    expect(await subscribers()).toBe(0);
    // disconnect() ends the socket; the status follows when it has closed.
    await eventually(async () => identity.subscriber.status === 'end');
    expect(await redis.ping()).toBe('PONG');
  });
});
