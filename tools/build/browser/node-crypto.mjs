/**
 * The browser's `node:crypto`, for the pages (tools/build/pages.mjs aliases `node:crypto` to this
 * file). The shared chain and records code hashes through `hash('sha256', data, enc)`; Node fills
 * that with its native SHA-256, the pages with @bsv/sdk's pure, synchronous one (WebCrypto's is
 * async and the verifier's code is not). Only what that code calls is here; everything else MUST
 * throw rather than answer something weaker.
 */
import { Hash } from '@bsv/sdk';
import { Buffer } from 'buffer';

function sha256(data) {
  return Buffer.from(Hash.sha256(Array.from(data)));
}

function encode(bytes, encoding) {
  return encoding === undefined || encoding === 'buffer' ? bytes : bytes.toString(encoding);
}

export function hash(algorithm, data, encoding = 'hex') {
  if (String(algorithm).toLowerCase() !== 'sha256')
    throw new Error(`hash ${algorithm} is not available in the browser`);
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return encode(sha256(bytes), encoding);
}

export function createHash(algorithm) {
  if (String(algorithm).toLowerCase() !== 'sha256')
    throw new Error(`hash ${algorithm} is not available in the browser`);
  const parts = [];
  const hasher = {
    update(data, inputEncoding) {
      parts.push(typeof data === 'string' ? Buffer.from(data, inputEncoding ?? 'utf8') : Buffer.from(data));
      return hasher;
    },
    digest(encoding) {
      return encode(sha256(Buffer.concat(parts)), encoding);
    },
  };
  return hasher;
}

export function randomBytes(size) {
  const bytes = Buffer.alloc(size);
  globalThis.crypto.getRandomValues(bytes);
  return bytes;
}

const unavailable = (name) => () => {
  throw new Error(`crypto.${name} is not available in the browser`);
};
export const createHmac = unavailable('createHmac');
export const createPrivateKey = unavailable('createPrivateKey');

export default { hash, createHash, randomBytes, createHmac, createPrivateKey };
