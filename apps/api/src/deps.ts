import type { Queue } from 'bullmq';
import type { FeePolicyStatus } from '@proofline/chain-wallet';
import type { ClaimsService } from '@proofline/identity-claims';
import type { Identity } from '@proofline/identity-feature';
import type { RecordReads, RecordReceipts, RecordWrites } from '@proofline/records-feature';
import type { Clock, Config } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import type { WebhookAdmin } from '@proofline/webhooks-feature';
import type { IdempotencyStore } from './idempotency';
import type { ApiMetrics } from './metrics';
import type { ArcCallbackDeps } from './routes/arc-callback';
import type { RecordsAuth } from './routes/records';

/**
 * Everything the REST app is composed from. `main.ts` builds it from the configuration; tests
 * build it with their own Redis prefix and clock. Each feature adds its service here.
 */
export interface ApiDeps {
  readonly config: Config;
  readonly logger: Logger;
  /** Request-path Redis connection (finite retries: an outage becomes a fast 503). */
  readonly redis: RedisClient;
  readonly clock: Clock;
  readonly claims: ClaimsService;
  /** Identity API keys: `requireKey` authentication and the key use cases (routes mounted only when present). */
  readonly identity?: Identity;
  /** Linked and independent records (routes mounted only when present, e.g. not in health tests). */
  readonly records?: {
    readonly reads: RecordReads;
    readonly writes: RecordWrites;
    readonly receipts?: RecordReceipts;
    readonly auth: RecordsAuth;
  };
  /** Webhook management (`/api/v1/webhooks`; mounted only when present, with identity). */
  readonly webhooks?: WebhookAdmin;
  /** `Idempotency-Key` on record writes: claims and recorded answers in Redis (absent: the header is ignored). */
  readonly idempotency?: IdempotencyStore;
  /** Every BullMQ queue of the service, for the dashboard at /admin/queues (mounted when present and ADMIN_UI is on). */
  readonly queues?: readonly Queue[];
  /** Prometheus metrics: the request middleware and `/metrics` (mounted only when present). */
  readonly metrics?: ApiMetrics;
  /** Readiness detail: whether ARC's fee policy is known (writes answer 503 FEE_POLICY_UNKNOWN while it is not). */
  readonly feePolicy?: () => FeePolicyStatus;
  /** ARC status callbacks (`POST /arc/callback`), mounted only when ARC_CALLBACK_URL and ARC_CALLBACK_TOKEN are set. */
  readonly arcCallback?: ArcCallbackDeps;
}
