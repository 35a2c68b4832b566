import type { ClaimsService } from '@proofline/identity-claims';
import type { IdentityService } from '@proofline/identity-feature';
import type { RecordsService } from '@proofline/records-feature';
import type { Clock, Config } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import type { Redis } from '@proofline/shared-redis';
import type { ApiMetrics } from './metrics';
import type { RecordsAuth } from './routes/records-http';

/**
 * Everything the REST app is composed from. `main.ts` builds it from the configuration; tests
 * build it with their own Redis prefix and clock. Each feature adds its service here.
 */
export interface ApiDeps {
  readonly config: Config;
  readonly logger: Logger;
  /** Request-path Redis connection (finite retries: an outage becomes a fast 503). */
  readonly redis: Redis;
  readonly clock: Clock;
  readonly claims: ClaimsService;
  /** Identity API keys: `requireKey` authentication and the key use cases (routes mounted only when present). */
  readonly identity?: IdentityService;
  /** Linked and independent records (routes mounted only when present, e.g. not in health tests). */
  readonly records?: { readonly service: RecordsService; readonly auth: RecordsAuth };
  /** Prometheus metrics: the request middleware and `/metrics` (mounted only when present). */
  readonly metrics?: ApiMetrics;
}
