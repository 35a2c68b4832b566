import { closeOmConnection, identityKeys, openOmConnection } from '@proofline/identity-data-access';
import { issueKey } from '@proofline/identity-domain';
import { systemClock, loadConfig } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { masters } from '@proofline/shared-redis';
import {
  eventually,
  testBullRedis,
  testRedis,
  testRedisClient,
  testRedisDeployment,
  testRedisUrl,
  uniquePrefix,
} from '@proofline/shared-testing';
import { createIdentity } from './create-identity';
import { openIdentity } from './open-identity';
import { startIdentityKeyWorker } from './key-worker';

describe('createIdentity / startIdentityKeyWorker: connections belong to the caller; openIdentity: to itself', () => {
  const prefix = uniquePrefix('idfactory');
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

  it('subscribes on the given subscriber, trusts its cache while subscribed, and on close detaches without closing any connection', async () => {
    const subscriber = testRedisClient({ maxRetriesPerRequest: null });
    const om = await openOmConnection(testRedisDeployment(), () => undefined);
    const identity = await createIdentity({
      config,
      logger,
      clock: systemClock,
      connections: { redis, om, subscriber, bull: subscriber },
    });
    await eventually(async () => (await subscribers()) === 1);
    const now = new Date();
    const { record } = issueKey({
      id: 'k',
      tenant: 'acme',
      name: 'k',
      permissions: ['Issuer_User'],
      createdBy: 't',
      createdAt: now,
      expiresAt: now,
    });
    await eventually(async () => {
      identity.authenticator.cache.set(record.keyHash, record, identity.authenticator.cache.generation);
      return identity.authenticator.cache.size === 1;
    });

    await identity.close();
    expect(await subscribers()).toBe(0);
    expect(identity.authenticator.cache.size).toBe(0);
    expect(subscriber.status).toBe('ready');
    expect(await subscriber.ping()).toBe('PONG'); // out of subscriber mode, still open
    expect(await redis.ping()).toBe('PONG');
    expect((om as unknown as { isOpen: boolean }).isOpen).toBe(true);
    await closeOmConnection(om);
    await subscriber.quit();
  });

  it('the key worker closes its BullMQ worker and leaves the command connection open', async () => {
    const own = testRedisClient({ maxRetriesPerRequest: null });
    const bull = testBullRedis();
    const running = await startIdentityKeyWorker({ config, logger, connections: { redis: own, bull } });
    expect(running.worker.isRunning()).toBe(true);
    await running.close();
    expect(running.worker.isRunning()).toBe(false);
    expect(await own.ping()).toBe('PONG');
    expect(await bull.ping()).toBe('PONG');
    await bull.quit();
    await own.quit();
  });

  it('openIdentity listens for key invalidations on a subscriber of its own, and its close ends that subscriber but not the command connection', async () => {
    const identity = await openIdentity(testRedisDeployment(), {
      config,
      logger,
      clock: systemClock,
      redis,
    });
    await eventually(async () => (await subscribers()) === 1);
    expect(identity.subscriber).not.toBe(redis);
    // The scope reads through its connections (redis-om for the tenant's keys).
    const caller = { keyId: 'k', tenant: 'nobody', permissions: [], source: 'identity' } as const;
    expect(await identity.keys.listKeys(caller)).toEqual([]);

    await Promise.all([identity.close(), identity.close()]);
    expect(await subscribers()).toBe(0);
    // disconnect() ends the sockets; the status follows when they have closed ('end' for one
    // server; a cluster client of three masters was seen to stay at 'close', its pool drained).
    await eventually(async () => ['close', 'end'].includes(identity.subscriber.status));
    expect(await redis.ping()).toBe('PONG');
  });
});
