import { z } from 'zod';
import { booleanFlag, intFrom, optionalString, redisUrl, splitList } from '../parsers';
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
    // ARC's strictness and realities (libs/devnet/README.md, "Strictness and realities"). npm
    // start runs ARC's strict behaviours; the realities default off so a local run answers at once.
    strict: variable(
      'DEVNET_STRICT',
      "The devnet node behaves as ARC's code does: 460 for raw transactions whose parents are not stored, EF orphans held, 400 for unreadable requests, ARC's callback rules.",
      booleanFlag(true),
    ),
    standardFormatSupported: variable(
      'DEVNET_STANDARD_FORMAT',
      'false: the devnet node answers 460 to every raw (non-EF) transaction, as an ARC with standardFormatSupported=false.',
      booleanFlag(true),
    ),
    rejectCallbackContaining: variable(
      'DEVNET_REJECT_CALLBACK_CONTAINING',
      "Comma-separated substrings: an X-CallbackUrl containing one is refused with 400 (ARC's rejectCallbackContaining).",
      z.string().default('').transform(splitList),
    ),
    timeToSeenMs: variable(
      'DEVNET_TIME_TO_SEEN_MS',
      'An accepted transaction reports DEVNET_STATUS_BEFORE_SEEN this long before SEEN_ON_NETWORK (0: at once).',
      intFrom(0, 600_000).default(0),
    ),
    statusBeforeSeen: variable(
      'DEVNET_STATUS_BEFORE_SEEN',
      'The status an accepted transaction reports until DEVNET_TIME_TO_SEEN_MS has passed.',
      // The devnet's vocabulary (RECEIVED … ACCEPTED_BY_NETWORK) is checked by apps/devnet.
      z
        .string()
        .trim()
        .regex(/^[A-Za-z_]+$/, 'must be an ARC status name')
        .transform((v) => v.toUpperCase())
        .default('ACCEPTED_BY_NETWORK'),
    ),
    submitDelayMs: variable(
      'DEVNET_SUBMIT_DELAY_MS',
      'The devnet node answers POST /v1/tx and /v1/txs no earlier than this (a slow ARC).',
      intFrom(0, 60_000).default(0),
    ),
    doubleSpendMarksBoth: variable(
      'DEVNET_DOUBLE_SPEND_MARKS_BOTH',
      'A double spend marks the first spender DOUBLE_SPEND_ATTEMPTED too, until it is mined, as ARC does.',
      booleanFlag(false),
    ),
  },
});
