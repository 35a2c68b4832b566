import { z } from 'zod';

/** Record features a deployment can switch on or off (`FEATURES`). */
export const FEATURE_NAMES = ['linked', 'verify', 'navigate', 'unencoded'] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];

/** Encoders a deployment can offer (`ENCODERS`). */
export const ENCODER_NAMES = ['SHA256', 'Base64'] as const;
export type EncoderName = (typeof ENCODER_NAMES)[number];

const RAW_KEY = /^idty_[A-Za-z0-9]{32}$/;
/** A browser origin as sent in `Origin`: scheme, host, optional port; nothing else. */
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?$/;

const intFrom = (min: number, max: number) =>
  z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(min).max(max);

const csvOf = <T extends string>(allowed: readonly T[], what: string) =>
  z.string().transform((value, ctx) => {
    const items = value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    const out: T[] = [];
    for (const item of items) {
      const hit = allowed.find((a) => a.toLowerCase() === item.toLowerCase());
      if (!hit) {
        ctx.addIssue({ code: 'custom', message: `unknown ${what} "${item}" (allowed: ${allowed.join(', ')})` });
        return z.NEVER;
      }
      if (!out.includes(hit)) out.push(hit);
    }
    return out;
  });

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

/** An optional TCP port: unset or empty = not configured. */
const optionalPort = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  intFrom(1, 65535).optional(),
);
const httpUrl = z.string().regex(/^https?:\/\/\S+$/, 'must be an http(s) URL');

/** A rate limit: requests per second, with an optional burst (`100` or `100/200`). */
export interface RatePolicy {
  /** Sustained requests per second. */
  readonly perSecond: number;
  /** Requests that may arrive at once after a quiet period (≥ 1; default = `perSecond`). */
  readonly burst: number;
}

/** `RATE`, `RATE/BURST` (positive integers, burst ≥ 1), or unset/empty = no limit. */
const ratePolicy = z
  .string()
  .optional()
  .transform((v, ctx): RatePolicy | undefined => {
    if (v === undefined || v.trim() === '') return undefined;
    const m = /^\s*([1-9][0-9]{0,6})\s*(?:\/\s*([1-9][0-9]{0,6})\s*)?$/.exec(v);
    if (!m) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be requests per second, optionally with a burst: 100 or 100/200 (integers 1..9999999)',
      });
      return z.NEVER;
    }
    const perSecond = Number(m[1]);
    return { perSecond, burst: m[2] === undefined ? perSecond : Number(m[2]) };
  });

const booleanFlag = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const t = v.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(t)) return true;
      if (['false', '0', 'no', 'off'].includes(t)) return false;
      ctx.addIssue({ code: 'custom', message: 'must be true or false' });
      return z.NEVER;
    });

/**
 * The wallet seed every devnet deployment shares unless WALLET_SEED is set. It MUST equal
 * @proofline/chain-bsv's DEV_CHAIN_SEED (a wallet spec checks it). Public, so refused outside
 * the devnet: anyone could spend what it holds.
 */
export const DEVNET_WALLET_SEED = 'proofline-devnet-seed-v1';

/** Networks a deployment publishes to (`NETWORK`). */
export const NETWORKS = ['devnet', 'testnet', 'mainnet'] as const;
export type Network = (typeof NETWORKS)[number];

const envSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    REDIS_URL: z.string().url('must be a redis:// URL').default('redis://127.0.0.1:6379'),
    REDIS_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1-32 characters of A-Z a-z 0-9 _ -')
      .default('proofline'),
    HOST: z.string().default('0.0.0.0'),
    PORT: intFrom(0, 65535).default(3000),
    GRAPHQL_PORT: intFrom(0, 65535).default(4000),
    BLOCK_INTERVAL_MS: intFrom(200, 3_600_000).default(10_000),
    MAX_LINKS: intFrom(1, 100_000).default(1000),
    KEY_LIMIT: intFrom(1, 1_000_000).default(5),
    KEY_LIFETIME_DAYS: intFrom(1, 3650).default(60),
    LEGACY_SUNSET: z.iso
      .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
      .default('2026-10-01T00:00:00Z'),
    FEATURES: csvOf(FEATURE_NAMES, 'feature').default([...FEATURE_NAMES]),
    ENCODERS: csvOf(ENCODER_NAMES, 'encoder').default([...ENCODER_NAMES]),
    MAX_RECORD_BYTES: intFrom(1, 64 * 1024 * 1024).default(1024 * 1024),
    WORKER_CONCURRENCY: intFrom(1, 1000).default(16),
    WORKERS: intFrom(0, 64).default(1),
    API_PROCESSES: intFrom(1, 64).default(2),
    REDIS_COMMAND_TIMEOUT_MS: intFrom(100, 60_000).default(1000),
    MAX_PENDING_PUBLICATIONS: intFrom(0, 100_000_000).default(100_000),
    PUBLISH_COALESCE_MS: intFrom(0, 1000).default(50),
    BOOTSTRAP_API_KEY: optionalString.refine(
      (v) => v === undefined || RAW_KEY.test(v),
      'must be idty_ followed by 32 letters or digits',
    ),
    AUTH_JWT_SECRET: optionalString.refine((v) => v === undefined || v.length >= 32, 'must be at least 32 characters'),
    AUTH_JWKS_URL: optionalString.refine((v) => v === undefined || /^https?:\/\//.test(v), 'must be an http(s) URL'),
    AUTH_JWT_ISSUER: optionalString,
    AUTH_JWT_AUDIENCE: optionalString,
    AUTH_CLAIMS_FIELD: z.string().min(1).default('cognito:groups'),
    KEY_CREATE_TIMEOUT_MS: intFrom(100, 120_000).default(10_000),
    SHUTDOWN_GRACE_MS: intFrom(0, 120_000).default(10_000),
    CORS_ORIGINS: z
      .string()
      .default('')
      .transform((value, ctx) => {
        const items = value
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s.length > 0);
        for (const item of items) {
          if (!ORIGIN.test(item)) {
            ctx.addIssue({
              code: 'custom',
              message: `"${item}" is not an origin (scheme://host[:port], no path, no wildcard)`,
            });
            return z.NEVER;
          }
        }
        return [...new Set(items)];
      }),
    GRAPHQL_MAX_BODY_BYTES: intFrom(1024, 16 * 1024 * 1024).default(100 * 1024),
    METRICS_HOST: optionalString,
    METRICS_PORT: optionalPort,
    GRAPHQL_METRICS_PORT: optionalPort,
    WORKER_METRICS_PORT: optionalPort,
    // ARC publication (issue 8): the devnet answers on 9090 by default.
    NETWORK: z.enum(NETWORKS, { error: `must be one of ${NETWORKS.join(', ')}` }).default('devnet'),
    ARC_URL: httpUrl.default('http://127.0.0.1:9090'),
    ARC_API_KEY: optionalString,
    ARC_CALLBACK_URL: optionalString.refine((v) => v === undefined || /^https?:\/\//.test(v), 'must be an http(s) URL'),
    ARC_CALLBACK_TOKEN: optionalString.refine(
      (v) => v === undefined || v.length >= 16,
      'must be at least 16 characters',
    ),
    ARC_TIMEOUT_MS: intFrom(1000, 120_000).default(15_000),
    HEADERS_URL: httpUrl.default('http://127.0.0.1:9090'),
    ARC_POLL_MS: intFrom(100, 3_600_000).default(2000),
    ARC_CALLBACK_GRACE_MS: intFrom(0, 86_400_000).default(30_000),
    WALLET_SEED: optionalString.refine(
      (v) => v === undefined || /^[0-9a-fA-F]{64}$/.test(v),
      'must be 64 hex characters (generate one: openssl rand -hex 32)',
    ),
    POOL_UTXO_SATS: intFrom(2, 100_000_000).default(1000),
    POOL_LOW_WATER: intFrom(0, 1_000_000).default(2000),
    POOL_TARGET: intFrom(1, 1_000_000).default(10000),
    FEE_FLOOR_SATS_PER_KB: intFrom(0, 1_000_000).default(1),
    // The devnet node (apps/devnet): its ARC v1 + headers port, and an optional Bearer key for /v1/*.
    DEVNET_PORT: intFrom(0, 65535).default(9090),
    DEVNET_API_KEY: optionalString,
    // The devnet node's own Redis (its chain: transactions, UTXOs, blocks). Unset: REDIS_URL, except
    // under `npm start`, which gives the node a redis-server of its own (see apps/launcher).
    DEVNET_REDIS_URL: z.string().url('must be a redis:// URL').optional(),
    // Issue 11: rate limits and the queue dashboard.
    RATE_LIMIT_PER_KEY: ratePolicy,
    RATE_LIMIT_PER_TENANT: ratePolicy,
    ADMIN_UI: booleanFlag(true),
    // Webhooks (issue 11).
    WEBHOOK_ALLOW_PRIVATE: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
    WEBHOOK_SECRET_KEY: optionalString.refine(
      (v) => v === undefined || /^[0-9a-fA-F]{64}$/.test(v),
      'must be 64 hex characters (generate one: openssl rand -hex 32)',
    ),
    WEBHOOK_LIMIT: intFrom(1, 1000).default(10),
  })
  .superRefine((e, ctx) => {
    if ((e.ARC_CALLBACK_URL === undefined) !== (e.ARC_CALLBACK_TOKEN === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['ARC_CALLBACK_TOKEN'],
        message: 'ARC_CALLBACK_URL and ARC_CALLBACK_TOKEN are set together or not at all',
      });
    }
    if (e.NETWORK !== 'devnet' && e.WALLET_SEED === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['WALLET_SEED'],
        message: `required when NETWORK is ${e.NETWORK} (generate one: openssl rand -hex 32, then fund its address)`,
      });
    }
    if (e.POOL_TARGET < e.POOL_LOW_WATER) {
      ctx.addIssue({
        code: 'custom',
        path: ['POOL_TARGET'],
        message: `must be at least POOL_LOW_WATER (${e.POOL_LOW_WATER})`,
      });
    }
  });

/** The validated, frozen configuration every app is built from. */
export interface Config {
  readonly nodeEnv: 'development' | 'production' | 'test';
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly host: string;
  readonly port: number;
  readonly graphqlPort: number;
  readonly blockIntervalMs: number;
  readonly maxLinks: number;
  readonly keyLimit: number;
  readonly keyLifetimeDays: number;
  readonly legacySunset: Date;
  readonly features: Readonly<Record<FeatureName, boolean>>;
  readonly encoders: readonly EncoderName[];
  readonly maxRecordBytes: number;
  readonly workerConcurrency: number;
  /** Worker processes `npm start` forks. */
  readonly workers: number;
  /** `API_PROCESSES`: REST server processes sharing `PORT` (each listens with reusePort; `npm start` runs and supervises them). */
  readonly apiProcesses: number;
  /** `REDIS_COMMAND_TIMEOUT_MS`: bound of every request-path Redis command (a frozen Redis answers 503 after it). */
  readonly redisCommandTimeoutMs: number;
  /** Accepted records waiting for publication beyond which writes answer 503 (0 = no limit). */
  readonly maxPendingPublications: number;
  /**
   * `PUBLISH_COALESCE_MS`: how long an API process gathers accepted records into one publication
   * job before adding it (0 = what arrived within one event-loop turn). Adds at most this much to
   * publication, never to a write's response.
   */
  readonly publishCoalesceMs: number;
  readonly bootstrapApiKey: string | undefined;
  readonly auth: {
    readonly jwtSecret: string | undefined;
    readonly jwksUrl: string | undefined;
    readonly issuer: string | undefined;
    readonly audience: string | undefined;
    readonly claimsField: string;
  };
  readonly keyCreateTimeoutMs: number;
  readonly shutdownGraceMs: number;
  /** Origins allowed to call the APIs from a browser (`CORS_ORIGINS`); empty = CORS off. */
  readonly corsOrigins: readonly string[];
  /** Largest GraphQL request body accepted (413 above it). */
  readonly graphqlMaxBodyBytes: number;
  /**
   * `/metrics` on a separate internal listener instead of the public port: `port` is
   * `METRICS_PORT` for the REST process, `GRAPHQL_METRICS_PORT` for the GraphQL process
   * (undefined = served on the public port); `host` is `METRICS_HOST`, default `HOST`.
   */
  readonly metrics: {
    readonly host: string;
    readonly apiPort: number | undefined;
    readonly graphqlPort: number | undefined;
    readonly workerPort?: number | undefined;
  };
  /** ARC publication: the network, the ARC endpoint and the headers source proofs are checked against. */
  readonly chain: {
    readonly network: Network;
    readonly arcUrl: string;
    readonly arcApiKey: string | undefined;
    /** Optional accelerator: polling `GET /v1/tx/{txid}` always runs. */
    readonly arcCallbackUrl: string | undefined;
    readonly arcCallbackToken: string | undefined;
    readonly arcTimeoutMs: number;
    readonly headersUrl: string;
    /** Confirmation polling interval (`GET /v1/tx/{txid}` of unproven txs + reorg check), one run at a time across workers. */
    readonly pollMs: number;
    /**
     * With callbacks configured, a published transaction is left to its callback this long before
     * polling asks for it (ARC_CALLBACK_GRACE_MS); without callbacks every watched one is polled.
     */
    readonly callbackGraceMs: number;
  };
  /** Where records are published; the devnet is the embedded default. */
  readonly network: Network;
  /** The devnet node (apps/devnet): listens on `HOST`:`port`; `/v1/*` need `Bearer apiKey` when set. */
  /** The devnet node (apps/devnet): its port, Bearer key, and the Redis its chain lives in (DEVNET_REDIS_URL, else REDIS_URL). */
  readonly devnet: { readonly port: number; readonly apiKey: string | undefined; readonly redisUrl: string };
  /** The funding wallet and its UTXO pool (libs/chain/wallet). */
  readonly wallet: {
    /** Key seed; {@link DEVNET_WALLET_SEED} only on the devnet. */
    readonly seed: string;
    /** Denomination the splitter cuts large UTXOs into. */
    readonly utxoSatoshis: number;
    /** Split when fewer usable UTXOs than this are free or pending. */
    readonly lowWater: number;
    /** A split refills the pool up to this many usable UTXOs. */
    readonly target: number;
    /** Lowest fee rate ever paid, satoshis per 1000 bytes (the rate follows ARC's policy above it). */
    readonly feeFloorSatsPerKb: number;
  };
  /** Per-key and per-tenant request rate limits of the REST API (undefined = off). */
  readonly rateLimit: { readonly perKey: RatePolicy | undefined; readonly perTenant: RatePolicy | undefined };
  /** The BullMQ dashboard at `/admin/queues` (`ADMIN_UI`, default on; admin keys only). */
  readonly adminUi: boolean;
  /** Outgoing webhooks (libs/webhooks). */
  readonly webhooks: {
    /** `WEBHOOK_ALLOW_PRIVATE`: deliver to loopback/private/link-local addresses (local development and tests only). */
    readonly allowPrivate: boolean;
    /** `WEBHOOK_SECRET_KEY` (32 bytes hex): encrypts the signing secrets at rest; unset = a random key kept in Redis. */
    readonly secretKey: string | undefined;
    /** Webhooks per tenant. */
    readonly limit: number;
  };
}

/** Thrown by {@link loadConfig}; `message` is one line naming the offending variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Parses the environment once. Throws {@link ConfigError} with a one-line message naming the
 * first bad variable, e.g. `PORT: must be an integer (got "abc")`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'environment');
    const got = env[name];
    throw new ConfigError(
      `${name}: ${issue?.message ?? 'invalid'}${got === undefined ? '' : ` (got ${JSON.stringify(got)})`}`,
    );
  }
  const e = parsed.data;
  if (e.NODE_ENV === 'production' && e.AUTH_JWT_SECRET === undefined && e.AUTH_JWKS_URL === undefined) {
    // Outside production a development secret is generated (and kept in Redis); in production
    // tokens must verify against a secret or key set the operator chose.
    throw new ConfigError('AUTH_JWT_SECRET: required when NODE_ENV=production (32+ characters), or set AUTH_JWKS_URL');
  }
  const features = Object.fromEntries(FEATURE_NAMES.map((f) => [f, e.FEATURES.includes(f)])) as Record<
    FeatureName,
    boolean
  >;
  return deepFreeze({
    nodeEnv: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    host: e.HOST,
    port: e.PORT,
    graphqlPort: e.GRAPHQL_PORT,
    blockIntervalMs: e.BLOCK_INTERVAL_MS,
    maxLinks: e.MAX_LINKS,
    keyLimit: e.KEY_LIMIT,
    keyLifetimeDays: e.KEY_LIFETIME_DAYS,
    legacySunset: new Date(e.LEGACY_SUNSET),
    features,
    encoders: e.ENCODERS,
    maxRecordBytes: e.MAX_RECORD_BYTES,
    workerConcurrency: e.WORKER_CONCURRENCY,
    workers: e.WORKERS,
    apiProcesses: e.API_PROCESSES,
    redisCommandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
    maxPendingPublications: e.MAX_PENDING_PUBLICATIONS,
    publishCoalesceMs: e.PUBLISH_COALESCE_MS,
    bootstrapApiKey: e.BOOTSTRAP_API_KEY,
    auth: {
      jwtSecret: e.AUTH_JWT_SECRET,
      jwksUrl: e.AUTH_JWKS_URL,
      issuer: e.AUTH_JWT_ISSUER,
      audience: e.AUTH_JWT_AUDIENCE,
      claimsField: e.AUTH_CLAIMS_FIELD,
    },
    keyCreateTimeoutMs: e.KEY_CREATE_TIMEOUT_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    corsOrigins: e.CORS_ORIGINS,
    graphqlMaxBodyBytes: e.GRAPHQL_MAX_BODY_BYTES,
    metrics: {
      host: e.METRICS_HOST ?? e.HOST,
      apiPort: e.METRICS_PORT,
      graphqlPort: e.GRAPHQL_METRICS_PORT,
      workerPort: e.WORKER_METRICS_PORT,
    },
    chain: {
      network: e.NETWORK,
      arcUrl: e.ARC_URL,
      arcApiKey: e.ARC_API_KEY,
      arcCallbackUrl: e.ARC_CALLBACK_URL,
      arcCallbackToken: e.ARC_CALLBACK_TOKEN,
      arcTimeoutMs: e.ARC_TIMEOUT_MS,
      headersUrl: e.HEADERS_URL,
      pollMs: e.ARC_POLL_MS,
      callbackGraceMs: e.ARC_CALLBACK_GRACE_MS,
    },
    network: e.NETWORK,
    devnet: { port: e.DEVNET_PORT, apiKey: e.DEVNET_API_KEY, redisUrl: e.DEVNET_REDIS_URL ?? e.REDIS_URL },
    wallet: {
      seed: e.WALLET_SEED?.toLowerCase() ?? DEVNET_WALLET_SEED,
      utxoSatoshis: e.POOL_UTXO_SATS,
      lowWater: e.POOL_LOW_WATER,
      target: e.POOL_TARGET,
      feeFloorSatsPerKb: e.FEE_FLOOR_SATS_PER_KB,
    },
    rateLimit: { perKey: e.RATE_LIMIT_PER_KEY, perTenant: e.RATE_LIMIT_PER_TENANT },
    adminUi: e.ADMIN_UI,
    webhooks: {
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE === 'true',
      secretKey: e.WEBHOOK_SECRET_KEY?.toLowerCase(),
      limit: e.WEBHOOK_LIMIT,
    },
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
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
