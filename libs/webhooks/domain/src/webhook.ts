import { z } from 'zod';

/** Events a webhook may subscribe to. */
export const WEBHOOK_EVENTS = ['record.confirmed', 'record.failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Longest accepted webhook URL. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Body of `POST /api/v1/webhooks`; unknown fields are refused by name. */
export const CreateWebhookRequest = z.strictObject({
  url: z.string().min(1).max(MAX_WEBHOOK_URL_LENGTH),
  events: z
    .array(z.enum(WEBHOOK_EVENTS, { error: `must be one of ${WEBHOOK_EVENTS.join(', ')}` }))
    .min(1, 'at least one event')
    .max(WEBHOOK_EVENTS.length)
    .refine((events) => new Set(events).size === events.length, 'events must not repeat'),
});
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequest>;

/** A webhook as its tenant sees it (the secret only in the create answer). */
export interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly events: WebhookEvent[];
  readonly createdAt: string;
}

/** A stored webhook: the view plus its tenant and the encrypted signing secret. */
export interface StoredWebhook extends Webhook {
  readonly tenant: string;
  /** The signing secret, encrypted (see `SecretBox` in webhooks-feature). Never logged. */
  readonly secretSealed: string;
}

/** One delivery attempt, as `GET /api/v1/webhooks/{id}/deliveries` lists it (newest first). */
export interface DeliveryAttempt {
  /** `webhook-id` of the message (the same on every retry). */
  readonly messageId: string;
  readonly event: WebhookEvent;
  readonly txId: string;
  /** 1-based attempt number. */
  readonly attempt: number;
  readonly at: string;
  /** HTTP status of the receiver's answer; null when none came (timeout, refused, blocked address). */
  readonly statusCode: number | null;
  readonly durationMs: number;
  /** Why the attempt failed; null on a 2xx. */
  readonly error: string | null;
  readonly delivered: boolean;
}

/** Deliveries kept per webhook (older attempts are trimmed). */
export const MAX_DELIVERIES_KEPT = 50;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for a webhook id (a lowercase UUID). */
export function isWebhookId(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
