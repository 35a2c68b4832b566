import { z } from 'zod';
import { intFrom, optionalHexKey } from '../parsers';
import { slice, variable } from '../variable';

/** Outgoing webhooks (libs/webhooks). */
export const webhooks = slice({
  webhooks: {
    allowPrivate: variable(
      'WEBHOOK_ALLOW_PRIVATE',
      'Deliver to loopback, private and link-local addresses (local development and tests only).',
      z
        .enum(['true', 'false'], { error: 'must be true or false' })
        .default('false')
        .transform((v) => v === 'true'),
    ),
    secretKey: variable(
      'WEBHOOK_SECRET_KEY',
      'Key (64 hex characters) that seals the signing secrets at rest; unset = a random key kept in Redis.',
      optionalHexKey,
    ),
    limit: variable('WEBHOOK_LIMIT', 'Webhooks per tenant.', intFrom(1, 1000).default(10)),
  },
});
