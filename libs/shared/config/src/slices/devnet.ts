import { intFrom, optionalString, redisUrl } from '../parsers';
import { slice, variable } from '../variable';
import { REDIS_URL } from './redis';

/** The devnet node (apps/devnet): listens on `HOST`:`port`; `/v1/*` need `Bearer apiKey` when set. */
export const devnet = slice({
  blockIntervalMs: variable('BLOCK_INTERVAL_MS', 'Devnet block interval.', intFrom(200, 3_600_000).default(10_000)),
  devnet: {
    port: variable('DEVNET_PORT', "The devnet node's ARC v1 and headers port.", intFrom(0, 65535).default(9090)),
    apiKey: variable('DEVNET_API_KEY', "When set, the devnet node's /v1/* require this Bearer key.", optionalString),
    // Unset: REDIS_URL, except under `npm start`, which gives the node a redis-server of its own
    // (see apps/launcher).
    redisUrl: variable(
      'DEVNET_REDIS_URL',
      "Redis of the devnet node's chain (transactions, UTXOs, blocks); default REDIS_URL.",
      redisUrl.optional(),
      REDIS_URL,
    ),
  },
});
