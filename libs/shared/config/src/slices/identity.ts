import { z } from 'zod';
import { intFrom, optionalHttpUrl, optionalString } from '../parsers';
import { slice, variable } from '../variable';
import { NODE_ENV } from './server';

const RAW_KEY = /^idty_[A-Za-z0-9]{32}$/;

/** API keys, verifier tokens and the legacy key endpoints. */
export const identity = slice(
  {
    nodeEnv: NODE_ENV,
    keyLimit: variable(
      'KEY_LIMIT',
      'Keys per tenant (revoked and expired ones included until deleted).',
      intFrom(1, 1_000_000).default(5),
    ),
    keyLifetimeDays: variable('KEY_LIFETIME_DAYS', 'Key lifetime in days.', intFrom(1, 3650).default(60)),
    keyCreateTimeoutMs: variable(
      'KEY_CREATE_TIMEOUT_MS',
      'How long the API waits for the key worker before answering 503.',
      intFrom(100, 120_000).default(10_000),
    ),
    legacySunset: variable(
      'LEGACY_SUNSET',
      'After this instant the legacy key endpoints answer 410 Gone.',
      z.iso
        .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
        .default('2026-10-01T00:00:00Z')
        .transform((iso) => new Date(iso)),
    ),
    bootstrapApiKey: variable(
      'BOOTSTRAP_API_KEY',
      'An idty_ key registered at start (idempotently) as an admin key of tenant `default`.',
      optionalString.refine(
        (v) => v === undefined || RAW_KEY.test(v),
        'must be idty_ followed by 32 letters or digits',
      ),
    ),
    auth: {
      jwtSecret: variable(
        'AUTH_JWT_SECRET',
        'HS256 secret (32+ characters) for verifier tokens.',
        optionalString.refine((v) => v === undefined || v.length >= 32, 'must be at least 32 characters'),
      ),
      jwksUrl: variable(
        'AUTH_JWKS_URL',
        'JWKS URL of an identity provider (takes precedence over the secret).',
        optionalHttpUrl,
      ),
      issuer: variable('AUTH_JWT_ISSUER', 'Token issuer, checked when set.', optionalString),
      audience: variable('AUTH_JWT_AUDIENCE', 'Token audience, checked when set.', optionalString),
      claimsField: variable(
        'AUTH_CLAIMS_FIELD',
        'Token claim holding the granted claims.',
        z.string().min(1).default('cognito:groups'),
      ),
    },
  },
  // Outside production a development secret is generated (and kept in Redis); in production
  // tokens must verify against a secret or key set the operator chose.
  (c) =>
    c.nodeEnv === 'production' && c.auth.jwtSecret === undefined && c.auth.jwksUrl === undefined
      ? {
          env: 'AUTH_JWT_SECRET',
          message: 'required when NODE_ENV=production (32+ characters), or set AUTH_JWKS_URL',
          quote: false,
        }
      : undefined,
);
