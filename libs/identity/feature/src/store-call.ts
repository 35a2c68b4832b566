import { AppError, redisFailureIn, redisUnavailable } from '@proofline/shared-errors';
import { identityErrors as E } from './errors';

/**
 * Redis faults on the request path become 503 (with Retry-After), never a 500 or a hang. A store
 * call talks only to Redis, so a socket error of the call itself (ECONNRESET when the server dies
 * mid-command) is a Redis failure too: REDIS_UNAVAILABLE, like every other interface. Anything
 * else the store throws stays STORE_UNAVAILABLE.
 */
export async function storeCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (redisFailureIn(err)) throw redisUnavailable(err);
    throw E.storeUnavailable(err);
  }
}
