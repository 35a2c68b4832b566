import { FundingPool } from '@proofline/chain-wallet';
import { InMemoryChain } from '@proofline/records-testing';
import { loadConfig } from '@proofline/shared-config';
import type { Clock } from '@proofline/shared-config';
import type { RedisClient } from '@proofline/shared-redis';
import { testRedisUrl } from '@proofline/shared-testing';
import { createRecords } from '../records';
import type { Records } from '../records';

/**
 * The records scope these specs write through: real Redis under `prefix`, the in-memory chain as
 * builder and reader, a funding pool of `partitions` shards (default 1), a queue that drops what
 * it is given. Not in the lib's index: specs outside the lib import it as
 * `@proofline/records-feature/testing` (a path of its own, so the testing libs it uses stay out of
 * production imports, and no testing lib has to import records-feature, which imports them).
 */
export function memoryRecords(
  redis: RedisClient,
  prefix: string,
  clock: Clock,
  options: {
    partitions?: number;
    env?: Record<string, string>;
    confirmedIndexKeyOf?: (txId: string) => string;
  } = {},
): Records & { pool: FundingPool } {
  const pool = new FundingPool(redis, { prefix, address: 'test', clock, partitions: options.partitions ?? 1 });
  const records = createRecords({
    config: loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent', ...options.env }),
    clock,
    redis,
    prefix,
    builder: new InMemoryChain(),
    funding: { pool, feeRate: () => 1 },
    reader: new InMemoryChain(),
    queue: { enqueue: async () => undefined },
    ...(options.confirmedIndexKeyOf === undefined ? {} : { confirmedIndexKeyOf: options.confirmedIndexKeyOf }),
  });
  return { pool, ...records };
}
