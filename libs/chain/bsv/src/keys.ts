import { createHmac, createPrivateKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { PrivateKey } from '@bsv/sdk';

/**
 * The development seed every process uses unless one is injected. It only ever signs devnet
 * transactions; a real-network adapter MUST inject its own.
 */
export const DEV_CHAIN_SEED = 'proofline-devnet-seed-v1';

/** One signing key with what locking and unlocking need, computed once (EC math is costly). */
export interface SigningKey {
  readonly privateKey: PrivateKey;
  /** Compressed SEC public key. */
  readonly publicKey: number[];
  /** HASH160 of the public key (P2PKH). */
  readonly pubKeyHash: number[];
  /** The same key for node:crypto (OpenSSL signs ~7x faster than the sdk's JavaScript ECDSA). */
  readonly nodeKey: KeyObject;
}

/** The keys of a deployment: link outputs, pool funding and coinbase rewards. */
export interface ChainKeys {
  readonly link: SigningKey;
  readonly funding: SigningKey;
  readonly miner: SigningKey;
}

/** secp256k1 group order: a derived scalar must be in [1, n-1]. */
const N = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');

/** HMAC-SHA256(seed, label), re-derived with a counter in the (astronomically rare) out-of-range case. */
function deriveScalar(seed: string, label: string): string {
  for (let counter = 0; ; counter++) {
    const hex = createHmac('sha256', seed).update(`proofline/${label}/${counter}`).digest('hex');
    const n = BigInt(`0x${hex}`);
    if (n > 0n && n < N) return hex;
  }
}

function signingKey(hex: string): SigningKey {
  const privateKey = PrivateKey.fromHex(hex);
  const pub = privateKey.toPublicKey();
  const b64 = (h: string) => Buffer.from(h, 'hex').toString('base64url');
  const nodeKey = createPrivateKey({
    key: { kty: 'EC', crv: 'secp256k1', d: b64(hex), x: b64(pub.getX().toHex(32)), y: b64(pub.getY().toHex(32)) },
    format: 'jwk',
  });
  return { privateKey, publicKey: pub.encode(true) as number[], pubKeyHash: pub.toHash() as number[], nodeKey };
}

/** Derives the deployment's keys deterministically from `seed`, so every process signs alike. */
export function deriveChainKeys(seed: string = DEV_CHAIN_SEED): ChainKeys {
  if (seed.length === 0) throw new Error('chain seed must not be empty');
  return {
    link: signingKey(deriveScalar(seed, 'link')),
    funding: signingKey(deriveScalar(seed, 'funding')),
    miner: signingKey(deriveScalar(seed, 'miner')),
  };
}
