import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Prefix of a Standard Webhooks signing secret. */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The key bytes of a `whsec_` secret (its base64 part decoded). */
export function secretBytes(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('not a whsec_ secret');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/**
 * The Standard Webhooks signature header value: `v1,` + base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")),
 * `timestamp` in Unix seconds, `body` the exact bytes sent.
 */
export function signWebhook(secret: string, messageId: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${messageId}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** Checks a `webhook-signature` header (space-separated `v1,<sig>` entries) in constant time per entry. */
export function verifyWebhookSignature(
  secret: string,
  messageId: string,
  timestamp: number,
  body: string,
  header: string,
): boolean {
  const expected = Buffer.from(signWebhook(secret, messageId, timestamp, body));
  return header.split(' ').some((entry) => {
    const given = Buffer.from(entry);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
