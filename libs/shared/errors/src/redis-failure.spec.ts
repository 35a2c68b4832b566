import { AppError, badRequest, unavailable } from './app-error';
import { normaliseError, redisFailureIn, redisUnavailable } from './redis-failure';

const named = (name: string, message: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { name }, extra);

describe('Redis unavailability mapping (one place for REST and GraphQL)', () => {
  it.each([
    [
      'ioredis max retries',
      named(
        'MaxRetriesPerRequestError',
        'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
      ),
    ],
    ['ioredis command timeout (frozen server)', new Error('Command timed out')],
    ['ioredis closed connection', new Error('Connection is closed.')],
    ['ioredis offline queue off', new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    ['LOADING during AOF replay', named('ReplyError', 'LOADING Redis is loading the dataset in memory')],
    ['READONLY replica', named('ReplyError', "READONLY You can't write against a read only replica.")],
    ['node-redis offline', new Error('The client is offline')],
    ['node-redis closed', new Error('The client is closed')],
    ['a bounded node-redis call', named('RedisCallTimeoutError', 'redis call hGetAll did not answer within 1000 ms')],
    ['a raw refused socket', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })],
    ['a cluster without an answering node', named('ClusterAllFailedError', 'Failed to refresh slots cache.')],
    [
      'a cluster not ready, offline queue off',
      new Error("Cluster isn't ready and enableOfflineQueue options is false"),
    ],
    ['a cluster whose startup nodes are all down', new Error('None of startup nodes is available')],
    ['a cluster mid-failover', new Error('Too many Cluster redirections. Last error: Error: Connection is closed.')],
    ['CLUSTERDOWN', named('ReplyError', 'CLUSTERDOWN The cluster is down')],
    ['node-redis cluster', named('RootNodesUnavailableError', 'All the root nodes are unavailable')],
    [
      'a node-redis cluster client whose slot map is incomplete',
      named('ClusterSlotsUncoveredError', "the cluster's slot map covers 0 of 16384 slots"),
    ],
  ])('%s -> 503 REDIS_UNAVAILABLE with Retry-After', (_, error) => {
    const mapped = normaliseError(error);
    expect(mapped).toBeInstanceOf(AppError);
    expect(mapped).toMatchObject({ errorCode: 'REDIS_UNAVAILABLE', httpStatus: 503, headers: { 'Retry-After': '1' } });
    expect((mapped as AppError).detail).not.toContain(String((error as Error).message));
  });

  it('finds the failure behind a wrapping AppError 5xx (a store call) or a GraphQL-style originalError', () => {
    const wrapped = unavailable(
      'STORE_UNAVAILABLE',
      'The key store is unavailable.',
      1,
      new Error('Command timed out'),
    );
    expect(normaliseError(wrapped)).toMatchObject({ errorCode: 'REDIS_UNAVAILABLE' });
    const gql = {
      message: 'Unexpected',
      originalError: {
        message: 'x',
        cause: named('MaxRetriesPerRequestError', 'Reached the max retries per request limit (which is 1).'),
      },
    };
    expect(redisFailureIn(gql)).toBeDefined();
  });

  it('leaves refusals, other faults and other services alone', () => {
    const refusal = badRequest('TX_ID_PARAM_INVALID', 'bad');
    expect(normaliseError(refusal)).toBe(refusal);
    const bug = new TypeError('x is undefined');
    expect(normaliseError(bug)).toBe(bug);
    expect(normaliseError(named('ReplyError', 'ERR wrong number of arguments'))).toBeInstanceOf(Error);
    expect(normaliseError(named('ReplyError', 'ERR wrong number of arguments'))).not.toBeInstanceOf(AppError);
    // A script or command across slots is a bug of the service, not an outage: a 500.
    const crossSlot = named('ReplyError', "CROSSSLOT Keys in request don't hash to the same slot");
    expect(normaliseError(crossSlot)).not.toBeInstanceOf(AppError);
    // ARC answered with a refused socket nested in its own 503: still ARC_UNAVAILABLE, not Redis.
    const arc = new AppError({
      errorCode: 'ARC_UNAVAILABLE',
      httpStatus: 503,
      detail: 'ARC down',
      cause: Object.assign(new Error('fetch failed'), {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      }),
    });
    expect(normaliseError(arc)).toBe(arc);
    expect(redisUnavailable().errorCode).toBe('REDIS_UNAVAILABLE');
  });
});
