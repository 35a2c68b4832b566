import { z } from 'zod';
import { WEBHOOK_EVENTS } from './webhook';

const hash = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * Payload of a `webhooks-deliver` job. The body is fixed when the event is emitted, so every retry
 * sends the same bytes under the same `webhook-id`; only `webhook-timestamp` (and so the
 * signature) is the attempt's.
 */
export const WebhookDeliveryJob = z.object({
  webhookId: z.string().uuid(),
  messageId: z.string().min(1).max(100),
  event: z.enum(WEBHOOK_EVENTS),
  txId: hash,
  /** The JSON body, exactly as sent. */
  body: z.string().max(64 * 1024),
});
export type WebhookDeliveryJob = z.infer<typeof WebhookDeliveryJob>;

export const WEBHOOK_DELIVERY_JOB = 'deliver';

/**
 * The deterministic jobId of a delivery: one per webhook, txId and event, so the watcher may
 * enqueue it again after a crash without a second delivery (ids contain no ':').
 */
export function deliveryJobId(webhookId: string, txId: string, event: string): string {
  return `${webhookId}-${txId}-${event.replace('.', '_')}`;
}

/**
 * Retries: BullMQ's exponential backoff from `baseDelayMs` over `attempts` attempts. The defaults
 * (30 s, 13 attempts) spread the attempts over about 34 hours ({@link retrySpanMs}): at least 24 h.
 */
export interface DeliveryRetryPolicy {
  readonly attempts: number;
  readonly baseDelayMs: number;
}

export const DEFAULT_DELIVERY_RETRY: DeliveryRetryPolicy = { attempts: 13, baseDelayMs: 30_000 };

/** Time from the first attempt to the last under BullMQ's exponential backoff (delay * 2^(n-1)). */
export function retrySpanMs(policy: DeliveryRetryPolicy): number {
  return policy.baseDelayMs * (2 ** (policy.attempts - 1) - 1);
}

/** BullMQ options of a delivery job. Finished jobs stay a day so a re-enqueue by the watcher is a no-op. */
export function deliveryJobOptions(policy: DeliveryRetryPolicy) {
  return {
    attempts: policy.attempts,
    backoff: { type: 'exponential', delay: policy.baseDelayMs },
    removeOnComplete: { age: 86_400, count: 100_000 },
    removeOnFail: { age: 7 * 86_400 },
  } as const;
}
