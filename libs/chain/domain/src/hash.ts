import { hash } from 'node:crypto';

/**
 * SHA-256 of `data`. One-shot `crypto.hash`, not `createHash`: no Hash object per call. Each of
 * those carries a native handle the garbage collector must finalise, and a record is hashed ~40
 * times on its way (its txId, the sighash, the devnet's checks, every level of its proof):
 * verifying a proof cost ~70 µs with Hash objects, ~48 µs without.
 */
export function sha256(data: Uint8Array): Buffer {
  return hash('sha256', data, 'buffer');
}

/** Bitcoin's double SHA-256 (txIds, block hashes, Merkle nodes), in internal byte order. */
export function sha256d(data: Uint8Array): Buffer {
  return sha256(sha256(data));
}

const HASH_HEX = /^[0-9a-f]{64}$/;

/** True for a 32-byte hash as 64 lowercase hex characters. */
export function isHashHex(value: string): boolean {
  return HASH_HEX.test(value);
}

/**
 * Display hex (reversed, as txIds and block hashes are shown) to internal bytes.
 * @throws Error when `hex` is not 64 lowercase hex characters.
 */
export function fromDisplayHex(hex: string): Buffer {
  if (!isHashHex(hex)) throw new Error(`not a 32-byte hash in hex: ${hex.slice(0, 80)}`);
  return Buffer.from(hex, 'hex').reverse();
}

/** Internal bytes to display hex (reversed). */
export function toDisplayHex(internal: Uint8Array): string {
  return Buffer.from(internal).reverse().toString('hex');
}
