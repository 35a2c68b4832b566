/**
 * Operator CLI: `npm run cli -- <command>`.
 *   keys bootstrap [--tenant T]           print a new Issuer_Admin + Verifier_Admin key for tenant T (default "default")
 *   legacy import FILE [--tenant T]       import legacy customer user API keys from a JSON array
 *   token mint [--claims A,B] [--sub S] [--ttl SECONDS]   print a development JWT for /auth/granted-claims
 * It reads the same environment as the service (REDIS_URL, REDIS_PREFIX, AUTH_JWT_SECRET, ...).
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, systemClock } from '@proofline/shared-config';
import type { Config } from '@proofline/shared-config';
import { createRedis } from '@proofline/shared-redis';
import type { Redis } from '@proofline/shared-redis';
import { COMMANDS } from './commands';

const USAGE = `usage: npm run cli -- <command>
  keys bootstrap [--tenant T]                     print a new admin key (Issuer_Admin + Verifier_Admin) for tenant T
  legacy import FILE [--tenant T]                 import legacy customer user API keys from a JSON file
  token mint [--claims A,B] [--sub S] [--ttl S]   print a development JWT for GET /auth/granted-claims`;

export interface CliContext {
  config: Config;
  redis: Redis;
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
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, action, ...rest] = positionals;
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
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.ping();
  } catch {
    console.error(`proofline cli: Redis is not reachable at ${config.redisUrl} (is the service started? npm start)`);
    redis.disconnect();
    return 1;
  }
  try {
    const options = { tenant: values.tenant, claims: values.claims, sub: values.sub, ttl: values.ttl };
    await command.run({ config, redis, args: rest, options }, systemClock);
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
