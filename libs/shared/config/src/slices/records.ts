import { csvOf, intFrom } from '../parsers';
import { slice, variable } from '../variable';

/** Record features a deployment can switch on or off (`FEATURES`). */
export const FEATURE_NAMES = ['linked', 'verify', 'navigate', 'unencoded'] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];

/** Encoders a deployment can offer (`ENCODERS`). */
export const ENCODER_NAMES = ['SHA256', 'Base64'] as const;
export type EncoderName = (typeof ENCODER_NAMES)[number];

const features = csvOf(FEATURE_NAMES, 'feature')
  .default([...FEATURE_NAMES])
  .transform((on) => Object.fromEntries(FEATURE_NAMES.map((f) => [f, on.includes(f)])) as Record<FeatureName, boolean>);

/** Records and their publication: what a write may hold and how it reaches the publisher. */
export const records = slice({
  features: variable('FEATURES', 'Enabled record features; a disabled one answers 403 FEATURE_NOT_ENABLED.', features),
  encoders: variable(
    'ENCODERS',
    'Encoders offered to `encode`.',
    csvOf(ENCODER_NAMES, 'encoder').default([...ENCODER_NAMES]),
  ),
  maxLinks: variable('MAX_LINKS', 'Largest `links` a navigate may ask for.', intFrom(1, 100_000).default(1000)),
  maxRecordBytes: variable(
    'MAX_RECORD_BYTES',
    'Largest record body.',
    intFrom(1, 64 * 1024 * 1024).default(1024 * 1024),
  ),
  maxPendingPublications: variable(
    'MAX_PENDING_PUBLICATIONS',
    'Accepted records waiting for publication beyond which writes answer 503 (0 = no limit).',
    intFrom(0, 100_000_000).default(100_000),
  ),
  maxUnconfirmedLinks: variable(
    'MAX_UNCONFIRMED_LINKS',
    "Unconfirmed versions a linked chain may hold: an update or delete beyond them answers 409 CHAIN_UNCONFIRMED_DEPTH until a block confirms the chain's earlier versions (0 = no limit). Kept below the node's ancestor limit (SV Node's default 1000).",
    intFrom(0, 100_000).default(250),
  ),
  publishCoalesceMs: variable(
    'PUBLISH_COALESCE_MS',
    "How long an API process gathers accepted records into one publication job (0 = one event-loop turn); adds to publication, never to a write's response.",
    intFrom(0, 1000).default(50),
  ),
});
