import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { WebhookStore } from '@proofline/webhooks-data-access';

const VERSION = 'v1';

/**
 * Encrypts webhook signing secrets at rest (AES-256-GCM, random 96-bit IV, the webhook id as
 * associated data so a sealed secret cannot be moved to another webhook). A signing secret must
 * be usable to compute HMACs, so it cannot be stored as a one-way hash like API keys are.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(keyHex: string) {
    this.key = Buffer.from(keyHex, 'hex');
    if (this.key.length !== 32) throw new Error('the webhook secret key must be 32 bytes (64 hex characters)');
  }

  seal(secret: string, webhookId: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(webhookId, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), sealed.toString('base64')].join(
      '.',
    );
  }

  /** @throws Error when the value was not sealed for `webhookId` with this key. */
  open(value: string, webhookId: string): string {
    const [version, iv, tag, sealed] = value.split('.');
    if (version !== VERSION || !iv || !tag || sealed === undefined) throw new Error('not a sealed webhook secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(webhookId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64')), decipher.final()]).toString('utf8');
  }
}

/**
 * The box of a deployment: `WEBHOOK_SECRET_KEY` when set; otherwise a random key generated once
 * and kept in Redis beside the secrets (development convenience: set the variable in production,
 * so that a copy of Redis alone does not reveal the secrets).
 */
export async function openSecretBox(
  store: Pick<WebhookStore, 'sealKey'>,
  configuredKey: string | undefined,
): Promise<SecretBox> {
  return new SecretBox(configuredKey ?? (await store.sealKey(randomBytes(32).toString('hex'))));
}
