import type { RedisClient } from '@proofline/shared-redis';
import type { Clock, Config } from '@proofline/shared-config';
import { fundingIdentity } from './funding-address';
import { walletKeys } from './funding-pool';
import type { FundingIdentity } from './funding-address';
import { FundingPool } from './funding-pool';

/** The deployment's funding wallet: its identity (address, script) and its pool. */
export interface FundingWallet {
  readonly identity: FundingIdentity;
  readonly pool: FundingPool;
}

/**
 * Builds the funding wallet a composition root needs from the configuration and an injected
 * connection (request paths: a finite `maxRetriesPerRequest`, so Redis down is a fast 503). The
 * partition count is the resolved one (`withResolvedPartitions`): an unset `REDIS_PARTITIONS`
 * depends on the Redis.
 */
export function createFundingWallet(
  redis: RedisClient,
  config: Pick<Config, 'redisPrefix' | 'network' | 'wallet'> & { readonly redisPartitions: number },
  clock?: Clock,
): FundingWallet {
  const identity = fundingIdentity(config.wallet.seed, config.network);
  return {
    identity,
    pool: new FundingPool(redis, {
      prefix: config.redisPrefix,
      address: identity.address,
      partitions: config.redisPartitions,
      ...(clock ? { clock } : {}),
    }),
  };
}

/**
 * Refuses to run a pool of several partitions over a Redis that still holds the one-partition
 * layout's pool (`<prefix>:{rec}:wallet:counters`, what `REDIS_PARTITIONS=1` and every version
 * before partitions write): started that way, the service would neither find that layout's
 * records nor spend its funding, and its outbox would never be published. `redis migrate-keys`
 * moves it into the partitions (it leaves no pool under `{rec}`); `REDIS_PARTITIONS=1` keeps it.
 * One EXISTS; the composition roots of the API and the worker call it before they start.
 * @throws Error saying what to do, when such a pool is found.
 */
export async function refuseUnpartitionedPool(redis: RedisClient, prefix: string, partitions: number): Promise<void> {
  if (partitions <= 1) return;
  const legacy = walletKeys(prefix).counters;
  if ((await redis.exists(legacy)) === 1)
    throw new Error(
      `REDIS_PARTITIONS=${partitions}, but this Redis holds the one-partition layout (${legacy}): move it into the partitions with \`npm run cli -- redis migrate-keys\` (docs/redis-cluster.md, "Migrating a standalone deployment"), or run with REDIS_PARTITIONS=1`,
    );
}
