import { z } from 'zod';
import { intFrom, redisUrl } from '../parsers';
import { slice, variable } from '../variable';

export const REDIS_URL = variable(
  'REDIS_URL',
  'The Redis every process shares.',
  redisUrl.default('redis://127.0.0.1:6379'),
);

export const redis = slice({
  redisUrl: REDIS_URL,
  redisPrefix: variable(
    'REDIS_PREFIX',
    'Prefix of every Redis key (several deployments can share one Redis).',
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1-32 characters of A-Z a-z 0-9 _ -')
      .default('proofline'),
  ),
  redisCommandTimeoutMs: variable(
    'REDIS_COMMAND_TIMEOUT_MS',
    'Bound of every request-path Redis command (a frozen Redis answers 503 after it).',
    intFrom(100, 60_000).default(1000),
  ),
});
