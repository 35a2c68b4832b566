import { AppError } from './app-error';

/**
 * Redis unavailability, recognised in ONE place for every interface (REST's problem middleware,
 * GraphQL's error masking). Recognition is by the clients' error names, messages and reply
 * prefixes, so this lib imports no Redis client: ioredis (request path, BullMQ) and node-redis
 * (redis-om reads) are both covered.
 */

/** Seconds a client should wait before retrying while Redis is unavailable. */
export const REDIS_RETRY_AFTER_SECONDS = 1;

/** Error names of the clients that always mean "Redis did not answer". */
const NAMES = new Set([
  'MaxRetriesPerRequestError', // ioredis: reconnection attempts exhausted for a queued command
  'RedisCallTimeoutError', // shared-redis `withCallTimeout` (node-redis has no command timeout)
  'ClientClosedError', // node-redis
  'ClientOfflineError', // node-redis with disableOfflineQueue
  'SocketClosedUnexpectedlyError', // node-redis
  'ConnectionTimeoutError', // node-redis
  'ClusterAllFailedError', // ioredis Cluster: no node answered a refresh of the slot map
  'RootNodesUnavailableError', // node-redis cluster: no root node answered
  'ClusterSlotsUncoveredError', // identity-data-access: node-redis' slot map lacks slots (cluster being created)
]);

/** Exact messages of connection-level failures (ioredis and node-redis; their classes keep the name `Error`). */
const MESSAGES = new Set([
  'Command timed out', // ioredis commandTimeout: a frozen server
  'Connection is closed.', // ioredis
  "Stream isn't writeable and enableOfflineQueue options is false", // ioredis
  'The client is closed', // node-redis
  'The client is offline', // node-redis
  'Socket closed unexpectedly', // node-redis
  'Connection timeout', // node-redis connectTimeout
  'Disconnects client', // node-redis
  "Cluster isn't ready and enableOfflineQueue options is false", // ioredis Cluster
  'None of startup nodes is available', // ioredis Cluster
  'Cluster is ended.', // ioredis Cluster closing (shutdown, or reconnection given up)
  'All the root nodes are unavailable', // node-redis cluster
]);

/** Reply errors of a server that is up but cannot serve now (AOF replay, replica, failover, busy script, persistence or memory refusal). */
const REPLY_PREFIXES = [
  'LOADING',
  'READONLY',
  'MASTERDOWN',
  'BUSY',
  'TRYAGAIN',
  'CLUSTERDOWN',
  'NOREPLICAS',
  'MISCONF',
  'OOM',
];

/** Socket errors, recognised only on the error that reached the handler itself (a nested one may come from another service). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);

interface ErrorLike {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly cause?: unknown;
  readonly originalError?: unknown;
}

function isOwnRedisFailure(e: ErrorLike): boolean {
  if (typeof e.name === 'string' && NAMES.has(e.name)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  if (MESSAGES.has(message)) return true;
  if (message.startsWith('Reached the max retries per request limit')) return true;
  // ioredis Cluster following MOVED/ASK/TRYAGAIN/CLUSTERDOWN answers (a failover, a slot migration) past its bound.
  if (message.startsWith('Too many Cluster redirections.')) return true;
  if (
    (e.name === 'ReplyError' || e.name === 'ErrorReply') &&
    REPLY_PREFIXES.some((p) => message.startsWith(`${p} `) || message === p)
  )
    return true;
  return false;
}

/**
 * The Redis failure behind `error`, if any: the error itself or one in its `cause` /
 * `originalError` chain (an AppError wrapping a client error, a GraphQLError wrapping a resolver's
 * error). Returns undefined for everything else.
 */
export function redisFailureIn(error: unknown): Error | undefined {
  if (typeof error === 'object' && error !== null) {
    const code = (error as ErrorLike).code;
    if (typeof code === 'string' && SOCKET_CODES.has(code) && !(error instanceof AppError)) return error as Error;
  }
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const e = current as ErrorLike;
    if (isOwnRedisFailure(e)) return current as Error;
    current = e.cause ?? e.originalError;
  }
  return undefined;
}

/** The 503 every interface answers while Redis is unavailable (refused, reset, frozen, loading, read-only). */
export function redisUnavailable(cause?: unknown): AppError {
  return new AppError({
    errorCode: 'REDIS_UNAVAILABLE',
    httpStatus: 503,
    detail: 'The data store is temporarily unavailable. Retry after the Retry-After delay.',
    internalDetail: cause instanceof Error ? `${cause.name}: ${cause.message}` : undefined,
    retryable: true,
    cause,
    headers: { 'Retry-After': String(REDIS_RETRY_AFTER_SECONDS) },
  });
}

/**
 * Normalises a thrown value for the edges: a Redis failure (anywhere in the chain of a non-4xx
 * error) becomes {@link redisUnavailable}; a refusal the code decided (an AppError below 500) and
 * everything else pass unchanged. An AppError 5xx that only wraps a Redis failure (e.g. a store
 * call's STORE_UNAVAILABLE) is answered with the one public code, REDIS_UNAVAILABLE.
 */
export function normaliseError(error: unknown): unknown {
  if (error instanceof AppError && error.httpStatus < 500) return error;
  if (error instanceof AppError && error.errorCode === 'REDIS_UNAVAILABLE') return error;
  const failure = redisFailureIn(error);
  return failure ? redisUnavailable(failure) : error;
}
