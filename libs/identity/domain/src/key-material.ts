import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** `idty_` followed by 32 letters or digits. */
export const IDENTITY_KEY_PATTERN = /^idty_[A-Za-z0-9]{32}$/;
/**
 * Imported legacy raw keys may have another shape: 16 to 128 characters of letters, digits and
 * `._-`. Anything else in `x-api-key` is malformed and refused before Redis is asked.
 */
export const LEGACY_KEY_PATTERN = /^[A-Za-z0-9._-]{16,128}$/;
export const KEY_PREFIX = 'idty_';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Largest multiple of 62 that fits a byte: bytes at or above it are rejected (no modulo bias). */
const ACCEPT_BELOW = 256 - (256 % ALPHABET.length);

/** A new raw identity key from the CSPRNG: `idty_` + 32 characters, ~190 bits of entropy. */
export function generateRawKey(): string {
  let out = KEY_PREFIX;
  while (out.length < KEY_PREFIX.length + 32) {
    for (const byte of randomBytes(48)) {
      if (byte >= ACCEPT_BELOW) continue;
      out += ALPHABET[byte % ALPHABET.length];
      if (out.length === KEY_PREFIX.length + 32) break;
    }
  }
  return out;
}

/**
 * The stored form of a key: SHA-256, lowercase hex. A fast hash is the right choice here (not a
 * password KDF): the key is ~190 random bits, so brute force is hopeless whatever the hash cost,
 * and every authenticated request pays for it.
 */
export function hashKey(rawKey: string): string {
  return hash('sha256', rawKey, 'hex');
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** True when `value` has the shape of a key the service could know (identity or legacy). */
export function isWellFormedKey(value: string): boolean {
  return IDENTITY_KEY_PATTERN.test(value) || LEGACY_KEY_PATTERN.test(value);
}

/** `idty_` + 28 `*` + the last 4 characters (`****` when the raw key was never seen). */
export function keyMask(last4: string): string {
  return `${KEY_PREFIX}${'*'.repeat(28)}${last4.length === 4 ? last4 : '****'}`;
}
