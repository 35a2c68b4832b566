import type { Clock, Config } from '@proofline/shared-config';
import type { RedisClient } from '@proofline/shared-redis';
import { WebhookStore } from '@proofline/webhooks-data-access';
import { openSecretBox } from './secret-box';
import type { SecretBox } from './secret-box';
import { WebhookAdmin } from './webhook-admin';
import type { Resolver } from './url-guard';

export interface WebhooksScope {
  readonly config: Pick<Config, 'webhooks'>;
  /** The app's command connection (the factory opens none). */
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly clock: Clock;
  /** DNS resolution of webhook hosts (tests pass a fake; default the system resolver). */
  readonly resolve?: Resolver;
}

export interface Webhooks {
  readonly admin: WebhookAdmin;
  readonly store: WebhookStore;
  /** The secret box (resolved once: WEBHOOK_SECRET_KEY, or the generated key kept in Redis). */
  readonly box: () => Promise<SecretBox>;
}

/** The webhooks scope for an app: the store, the secret box and the management use cases. */
export function createWebhooks(scope: WebhooksScope): Webhooks {
  const store = new WebhookStore(scope.redis, scope.prefix);
  let opened: Promise<SecretBox> | undefined;
  const box = () => {
    opened ??= openSecretBox(store, scope.config.webhooks.secretKey).catch((e: unknown) => {
      opened = undefined;
      throw e;
    });
    return opened;
  };
  const admin = new WebhookAdmin({
    store,
    box,
    clock: scope.clock,
    allowPrivate: scope.config.webhooks.allowPrivate,
    limit: scope.config.webhooks.limit,
    ...(scope.resolve ? { resolve: scope.resolve } : {}),
  });
  return { admin, store, box };
}
