/**
 * Operator CLI: `npm run cli -- <command>`.
 *   keys bootstrap [--tenant T]           print a new Issuer_Admin + Verifier_Admin key for tenant T (default "default")
 *   legacy import FILE [--tenant T]       import legacy customer user API keys from a JSON array
 *   token mint [--claims A,B] [--sub S] [--ttl SECONDS]   print a development JWT for /auth/granted-claims
 *   wallet status | wallet split | wallet import TXID:VOUT:SATS...   the funding wallet (libs/chain/wallet)
 *   receipt verify FILE [--content PATH] [--encode ENCODE] [--headers-url URL]   check a receipt offline (no Redis, no config)
 *   chain index-owners                    index proofs stored before the tenant block index by their record's tenant
 *   redis migrate-keys [--dry-run] [--force]   move a stopped deployment's keys to the hash-tagged layout, then into REDIS_PARTITIONS partitions (docs/redis-cluster.md)
 * It reads the same environment as the service (REDIS_URL, REDIS_PREFIX, AUTH_JWT_SECRET, ...).
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, systemClock } from '@proofline/shared-config';
import type { Config, ResolvedConfig } from '@proofline/shared-config';
import { openRedis, redisTargetOf, withResolvedPartitions } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { COMMANDS } from './commands';
import { receiptVerify } from './receipt-command';

const USAGE = `usage: npm run cli -- <command>
  keys bootstrap [--tenant T]                     print a new admin key (Issuer_Admin + Verifier_Admin) for tenant T
  legacy import FILE [--tenant T]                 import legacy customer user API keys from a JSON file
  token mint [--claims A,B] [--sub S] [--ttl S]   print a development JWT for GET /auth/granted-claims
  wallet status                                   funding address, balance, pool size and pending spends
  wallet split                                    split large UTXOs into POOL_UTXO_SATS ones up to POOL_TARGET now
  wallet import TXID:VOUT:SATS [...]              add deposits paying the funding address to the pool
  receipt verify FILE [--content PATH] [--encode ENCODE] [--headers-url URL]
                                                  check a record's receipt offline: exit 0 valid, 1 a check failed, 2 malformed
  chain index-owners                              index proofs stored before the tenant block index (idempotent)
  redis migrate-keys [--dry-run] [--force]        move a stopped deployment's keys to the hash-tagged layout of
                                                  Redis Cluster support, in place, then its records and funding
                                                  pool into REDIS_PARTITIONS partitions (idempotent; docs/redis-cluster.md)`;

export interface CliContext {
  /** The configuration with the records partition count resolved (`resolvePartitions`). */
  config: ResolvedConfig;
  redis: RedisClient;
  args: string[];
  options: Record<string, string | undefined>;
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      claims: { type: 'string' },
      sub: { type: 'string' },
      ttl: { type: 'string' },
      content: { type: 'string' },
      encode: { type: 'string' },
      'headers-url': { type: 'string' },
      'dry-run': { type: 'boolean' },
      force: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, action, ...rest] = positionals;
  if (group === 'receipt' && action === 'verify' && !values.help) {
    // Offline by design: no configuration, no Redis, no network unless --headers-url.
    const out = await receiptVerify({
      file: rest[0],
      content: values.content,
      encode: values.encode,
      headersUrl: values['headers-url'],
    });
    for (const line of out.stdout) process.stdout.write(`${line}\n`);
    for (const line of out.stderr) process.stderr.write(`${line}\n`);
    return out.code;
  }
  const command = COMMANDS.find((c) => c.group === group && c.action === action);
  if (values.help || !command) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`proofline cli: configuration error: ${e.message}`);
      return 78;
    }
    throw e;
  }
  let redis: RedisClient | undefined;
  try {
    // One server or a cluster (REDIS_URL is asked which, or REDIS_CLUSTER_NODES names it).
    redis = await openRedis(redisTargetOf(config), {
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    await redis.ping();
  } catch {
    console.error(`proofline cli: Redis is not reachable at ${config.redisUrl} (is the service started? npm start)`);
    redis?.disconnect();
    return 1;
  }
  try {
    const options = {
      tenant: values.tenant,
      claims: values.claims,
      sub: values.sub,
      ttl: values.ttl,
      'dry-run': values['dry-run'] ? 'true' : undefined,
      force: values.force ? 'true' : undefined,
    };
    // REDIS_PARTITIONS unset: the count this Redis implies, as the service's processes resolve it.
    const resolved = await withResolvedPartitions(redis, config);
    await command.run({ config: resolved, redis, args: rest, options }, systemClock);
    return 0;
  } catch (e) {
    console.error(`proofline cli: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    await redis.quit().catch(() => undefined);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`proofline cli: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
