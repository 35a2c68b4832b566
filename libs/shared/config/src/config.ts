import { z } from 'zod';

/** Record features a deployment can switch on or off (`FEATURES`). */
export const FEATURE_NAMES = ['linked', 'verify', 'navigate', 'unencoded'] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];

/** Encoders a deployment can offer (`ENCODERS`). */
export const ENCODER_NAMES = ['SHA256', 'Base64'] as const;
export type EncoderName = (typeof ENCODER_NAMES)[number];

const RAW_KEY = /^idty_[A-Za-z0-9]{32}$/;

const intFrom = (min: number, max: number) =>
  z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(min).max(max);

const csvOf = <T extends string>(allowed: readonly T[], what: string) =>
  z.string().transform((value, ctx) => {
    const items = value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
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

const envSchema = z.object({
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
  LEGACY_SUNSET: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).default('2026-10-01T00:00:00Z'),
  FEATURES: csvOf(FEATURE_NAMES, 'feature').default([...FEATURE_NAMES]),
  ENCODERS: csvOf(ENCODER_NAMES, 'encoder').default([...ENCODER_NAMES]),
  MAX_RECORD_BYTES: intFrom(1, 64 * 1024 * 1024).default(1024 * 1024),
  WORKER_CONCURRENCY: intFrom(1, 1000).default(16),
  WORKERS: intFrom(0, 64).default(1),
  MAX_PENDING_PUBLICATIONS: intFrom(0, 100_000_000).default(100_000),
  BOOTSTRAP_API_KEY: optionalString.refine((v) => v === undefined || RAW_KEY.test(v), 'must be idty_ followed by 32 letters or digits'),
  AUTH_JWT_SECRET: optionalString.refine((v) => v === undefined || v.length >= 32, 'must be at least 32 characters'),
  AUTH_JWKS_URL: optionalString.refine((v) => v === undefined || /^https?:\/\//.test(v), 'must be an http(s) URL'),
  AUTH_JWT_ISSUER: optionalString,
  AUTH_JWT_AUDIENCE: optionalString,
  AUTH_CLAIMS_FIELD: z.string().min(1).default('cognito:groups'),
  KEY_CREATE_TIMEOUT_MS: intFrom(100, 120_000).default(10_000),
  SHUTDOWN_GRACE_MS: intFrom(0, 120_000).default(10_000),
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
  /** Accepted records waiting for publication beyond which writes answer 503 (0 = no limit). */
  readonly maxPendingPublications: number;
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
    throw new ConfigError(`${name}: ${issue?.message ?? 'invalid'}${got === undefined ? '' : ` (got ${JSON.stringify(got)})`}`);
  }
  const e = parsed.data;
  const features = Object.fromEntries(FEATURE_NAMES.map((f) => [f, e.FEATURES.includes(f)])) as Record<FeatureName, boolean>;
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
    maxPendingPublications: e.MAX_PENDING_PUBLICATIONS,
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
