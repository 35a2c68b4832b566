/**
 * The devnet node: an ARC-compatible BSV devnet on DEVNET_PORT. Composition root only:
 * configuration, its own Redis connection, the coinbase script (the service wallet's funding
 * P2PKH from WALLET_SEED, so mined coinbases fund the service), then `startDevnetNode`.
 * Needs no worker: it mines on its own timer every BLOCK_INTERVAL_MS.
 */
import { CONFIG_ERROR_EXIT, followLauncher, loadConfigOrExit } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import type { Logger } from '@proofline/shared-logger';
import { coalesceWrites, openRedis, redisTargetOf } from '@proofline/shared-redis';
import type { RedisTarget } from '@proofline/shared-redis';
import {
  LENIENT_ARC,
  STATUSES_BEFORE_SEEN,
  STRICT_ARC,
  devnetKeys,
  isStatusBeforeSeen,
  legacyDevnetTipKey,
  startDevnetNode,
} from '@proofline/devnet';
import { fundingIdentity } from '@proofline/chain-wallet';

async function main(): Promise<void> {
  const config = loadConfigOrExit('devnet');
  followLauncher();
  const logger = createLogger({ level: config.logLevel, name: 'devnet' });
  if (config.network !== 'devnet') {
    process.stderr.write(
      `proofline devnet: configuration error: NETWORK: the devnet node only runs with NETWORK=devnet (got ${config.network}; set ARC_URL to an external ARC)\n`,
    );
    process.exit(CONFIG_ERROR_EXIT);
  }
  const { statusBeforeSeen } = config.devnet;
  if (!isStatusBeforeSeen(statusBeforeSeen)) {
    process.stderr.write(
      `proofline devnet: configuration error: DEVNET_STATUS_BEFORE_SEEN: must be one of ${STATUSES_BEFORE_SEEN.join(', ')} (got ${statusBeforeSeen})\n`,
    );
    process.exit(CONFIG_ERROR_EXIT);
  }
  // Finite retries: while Redis is down, requests answer 503 REDIS_UNAVAILABLE instead of hanging.
  // Its chain's Redis: DEVNET_REDIS_URL (npm start gives the node a redis-server of its own), else
  // REDIS_URL — and REDIS_URL still when the chain the service's wallet was funded from lives there.
  // Either may be one server or any node of a cluster (detected); the service's cluster nodes and
  // NAT map apply to the devnet's Redis when it is the service's.
  const prefix = config.redisPrefix;
  const service = redisTargetOf(config);
  const own: RedisTarget =
    config.devnet.redisUrl === config.redisUrl ? service : { url: config.devnet.redisUrl, natMap: service.natMap };
  const target = await chainStore(own, service, prefix, logger);
  // A batch's accept scripts, sent back to back, leave in one socket write (coalesceWrites).
  const redis = coalesceWrites(await openRedis(target, { maxRetriesPerRequest: 2 }));
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  const funding = fundingIdentity(config.wallet.seed, 'devnet');
  const node = await startDevnetNode({
    redis,
    prefix,
    host: config.host,
    port: config.devnet.port,
    coinbaseLockingScriptHex: funding.lockingScriptHex,
    blockIntervalMs: config.blockIntervalMs,
    ...(config.devnet.apiKey !== undefined ? { apiKey: config.devnet.apiKey } : {}),
    strictness: {
      ...(config.devnet.strict ? STRICT_ARC : LENIENT_ARC),
      standardFormatSupported: config.devnet.standardFormatSupported,
      rejectCallbackContaining: config.devnet.rejectCallbackContaining,
    },
    realities: {
      timeToSeenMs: config.devnet.timeToSeenMs,
      statusBeforeSeen,
      submitDelayMs: config.devnet.submitDelayMs,
      doubleSpendMarksBoth: config.devnet.doubleSpendMarksBoth,
    },
    logger,
  });
  logger.info(
    {
      url: node.url,
      coinbaseAddress: funding.address,
      blockIntervalMs: config.blockIntervalMs,
      auth: config.devnet.apiKey !== undefined,
      strict: config.devnet.strict,
    },
    'devnet node started',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'devnet node stopping');
    const force = setTimeout(() => process.exit(1), config.shutdownGraceMs);
    force.unref();
    await node.close();
    await redis.quit().catch(() => undefined);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

/**
 * Where the node's chain lives. A deployment that ran the node in the service's Redis (before
 * DEVNET_REDIS_URL existed) keeps its chain there: the wallet's UTXOs and the records' proofs
 * belong to that chain, and a new empty chain elsewhere would refuse every funded write. For the
 * same reason a chain still under the key names from before the Redis Cluster hash tags is never
 * left behind for a new one: the node refuses to start until its keys are migrated.
 * @throws Error naming the Redis and the key when a chain under the old names is found.
 */
async function chainStore(
  devnet: RedisTarget,
  service: RedisTarget,
  prefix: string,
  logger: Logger,
): Promise<RedisTarget> {
  const tip = devnetKeys(prefix).tip;
  const legacyTip = legacyDevnetTipKey(prefix);
  /** True when `target` holds the chain, false when it holds none; throws on one under the old key names. */
  const probe = async (target: RedisTarget, name: string): Promise<boolean> => {
    const r = await openRedis(target, { maxRetriesPerRequest: 2 });
    r.on('error', () => undefined);
    try {
      // One key per command: the old name has no hash tag, so it may be in another slot.
      if ((await r.exists(tip)) === 1) return true;
      if ((await r.exists(legacyTip)) === 1)
        throw new Error(
          `the devnet's chain in ${name} is under the key names from before Redis Cluster support (${legacyTip}): move its keys first with \`npm run cli -- redis migrate-keys\`${name === 'REDIS_URL' ? '' : ` run with REDIS_URL=<${name}>`} (libs/devnet/README.md, "Redis keys")`,
        );
      return false;
    } finally {
      r.disconnect();
    }
  };
  if (devnet === service) {
    await probe(service, 'REDIS_URL');
    return service;
  }
  if (!(await probe(devnet, 'DEVNET_REDIS_URL')) && (await probe(service, 'REDIS_URL'))) {
    logger.warn(
      { tip },
      "the devnet's chain is in the service's Redis (REDIS_URL): the node keeps it there; wipe it to move the node to DEVNET_REDIS_URL",
    );
    return service;
  }
  return devnet;
}

main().catch((err: unknown) => {
  process.stderr.write(`proofline devnet: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
