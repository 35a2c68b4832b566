import type { z } from 'zod';
import { chain } from './slices/chain';
import { devnet } from './slices/devnet';
import { identity } from './slices/identity';
import { records } from './slices/records';
import { redis } from './slices/redis';
import { server } from './slices/server';
import { wallet } from './slices/wallet';
import { webhooks } from './slices/webhooks';
import { workers } from './slices/workers';
import { compose } from './variable';

export { FEATURE_NAMES, ENCODER_NAMES, type FeatureName, type EncoderName } from './slices/records';
export { NETWORKS, type Network } from './slices/chain';
export { DEVNET_WALLET_SEED } from './slices/wallet';
export type { RatePolicy } from './slices/server';

/**
 * The configuration, one slice per scope (libs/shared/config/README.md). The order is the order
 * variables are checked in, and so which one a message names when several are wrong; rules run
 * after every variable parsed, slice by slice.
 */
const composed = compose(server, redis, records, workers, chain, wallet, devnet, webhooks, identity);

/** The environment in, the frozen configuration out. */
export const configSchema = composed.schema;

/** The validated, frozen configuration every app is built from. */
export type Config = z.output<typeof configSchema>;

/**
 * A configuration whose records partition count is resolved (shared-redis `withResolvedPartitions`:
 * an unset `REDIS_PARTITIONS` depends on the Redis): what composition roots pass on.
 */
export type ResolvedConfig = Config & { readonly redisPartitions: number };

/** Every variable the configuration reads, with its one-line doc, in check order. */
export const CONFIG_VARIABLES: readonly { readonly name: string; readonly doc: string }[] = composed.variables.map(
  (v) => ({ name: v.env, doc: v.doc }),
);

/** Thrown by {@link loadConfig}; `message` is one line naming the offending variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Parses the environment once. Throws {@link ConfigError} with a one-line message naming the
 * first bad variable, e.g. `PORT: must be an integer (got "abc")`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const name = String(issue?.path[0] ?? 'environment');
  const got = issue?.code === 'custom' && issue.params?.['quote'] === false ? undefined : env[name];
  throw new ConfigError(
    `${name}: ${issue?.message ?? 'invalid'}${got === undefined ? '' : ` (got ${JSON.stringify(got)})`}`,
  );
}

/** Exit code of a process that refused its configuration (EX_CONFIG); `npm start` stops on it. */
export const CONFIG_ERROR_EXIT = 78;

/**
 * For process entry points: {@link loadConfig}, or print the one-line reason prefixed with
 * `proofline <name>:` and exit with {@link CONFIG_ERROR_EXIT}.
 */
export function loadConfigOrExit(name: string, env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`proofline ${name}: configuration error: ${e.message}\n`);
      process.exit(CONFIG_ERROR_EXIT);
    }
    throw e;
  }
}
