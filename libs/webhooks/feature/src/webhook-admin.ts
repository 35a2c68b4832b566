import { randomUUID } from 'node:crypto';
import { AppError, badRequest, notFound } from '@proofline/shared-errors';
import type { Clock } from '@proofline/shared-config';
import type { WebhookStore } from '@proofline/webhooks-data-access';
import { CreateWebhookRequest, isWebhookId, newWebhookSecret } from '@proofline/webhooks-domain';
import type { DeliveryAttempt, StoredWebhook, Webhook } from '@proofline/webhooks-domain';
import type { SecretBox } from './secret-box';
import { checkWebhookUrl } from './url-guard';
import type { Resolver } from './url-guard';

export interface WebhookAdminDeps {
  readonly store: WebhookStore;
  readonly box: () => Promise<SecretBox>;
  readonly clock: Clock;
  readonly allowPrivate: boolean;
  readonly limit: number;
  readonly resolve?: Resolver;
}

/** The create answer: the only time the signing secret is shown. */
export interface CreatedWebhook extends Webhook {
  readonly secret: string;
}

const view = (h: StoredWebhook): Webhook => ({ id: h.id, url: h.url, events: h.events, createdAt: h.createdAt });

/**
 * Webhook management for a tenant (REST `/api/v1/webhooks`, Issuer_Admin). Every method sees only
 * the caller's tenant: another tenant's id answers 404 WEBHOOK_NOT_FOUND like an unknown one.
 */
export class WebhookAdmin {
  constructor(private readonly deps: WebhookAdminDeps) {}

  /**
   * Creates a webhook; the secret (`whsec_` + base64 of 32 random bytes) is returned once and
   * stored only sealed.
   * @throws AppError 400 VALIDATION_FAILED, WEBHOOK_URL_INVALID, WEBHOOK_URL_NOT_ALLOWED; 409
   *   WEBHOOK_LIMIT_EXCEEDED.
   */
  async create(tenant: string, body: unknown): Promise<CreatedWebhook> {
    const parsed = CreateWebhookRequest.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.join('.') || 'body';
      throw badRequest(
        'VALIDATION_FAILED',
        `${where}: ${issue?.message ?? 'invalid'} (expected {"url": "https://…", "events": ["record.confirmed", "record.failed"]}).`,
      );
    }
    const url = await checkWebhookUrl(parsed.data.url, {
      allowPrivate: this.deps.allowPrivate,
      ...(this.deps.resolve ? { resolve: this.deps.resolve } : {}),
    });
    const id = randomUUID();
    const secret = newWebhookSecret();
    const box = await this.deps.box();
    const hook: StoredWebhook = {
      id,
      tenant,
      url: url.toString(),
      events: [...parsed.data.events],
      secretSealed: box.seal(secret, id),
      createdAt: this.deps.clock.now().toISOString(),
    };
    const outcome = await this.deps.store.createWebhook(hook, this.deps.limit);
    if (outcome === 'LIMIT') {
      throw new AppError({
        errorCode: 'WEBHOOK_LIMIT_EXCEEDED',
        httpStatus: 409,
        detail: `A tenant may have at most ${this.deps.limit} webhooks (WEBHOOK_LIMIT); delete one first.`,
      });
    }
    return { ...view(hook), secret };
  }

  async list(tenant: string): Promise<Webhook[]> {
    return (await this.deps.store.list(tenant)).map(view);
  }

  /** @throws AppError 400 WEBHOOK_ID_INVALID, 404 WEBHOOK_NOT_FOUND */
  async delete(tenant: string, idRaw: unknown): Promise<void> {
    const id = parseId(idRaw);
    if (!(await this.deps.store.delete(tenant, id))) throw webhookNotFound();
  }

  /** The latest delivery attempts of a webhook, newest first. @throws as {@link delete} */
  async deliveries(tenant: string, idRaw: unknown): Promise<DeliveryAttempt[]> {
    const id = parseId(idRaw);
    const hook = await this.deps.store.get(id);
    if (!hook || hook.tenant !== tenant) throw webhookNotFound();
    return this.deps.store.deliveries(id);
  }
}

function parseId(raw: unknown): string {
  const id = typeof raw === 'string' ? raw.toLowerCase() : raw;
  if (!isWebhookId(id)) throw badRequest('WEBHOOK_ID_INVALID', 'A webhook id is a UUID.');
  return id;
}

const webhookNotFound = () => notFound('WEBHOOK_NOT_FOUND', 'No such webhook for this tenant.');
