import type { PublicKey, Script, Spend } from '@bsv/sdk';
import { PublicKey as SdkPublicKey, TransactionSignature } from '@bsv/sdk';
import secp256k1 from 'secp256k1';
import { sha256d } from '@proofline/chain-domain';

/**
 * The node's script check is the sdk's interpreter (`Spend`): it parses both scripts, runs every
 * opcode, checks signature and key encodings, and builds each OP_CHECKSIG's sighash preimage.
 * Only the last step of OP_CHECKSIG, the ECDSA equation, is handed to libsecp256k1 here, as
 * real nodes do: the sdk's pure-JS `ECDSA.verify` costs ~2 ms a signature on this machine and
 * made the node's validation the bottleneck of the whole publication path (~200 tx/s); the
 * native check costs ~0.05 ms (`npx tsx bench/devnet-node.ts`).
 *
 * Same verdicts as the sdk: the digest is the sdk's own preimage, double-SHA256; a high-S
 * signature is normalised first (the sdk's verify accepts both halves, libsecp256k1 only the
 * lower); the legacy SIGHASH_SINGLE bug case (digest 1) stays with the sdk's implementation.
 * `native-checksig.spec.ts` holds the two side by side.
 */
export function withNativeChecksig(spend: Spend): Spend {
  const internals = spend as unknown as SpendInternals;
  const sdkVerify = internals.verifySignature;
  internals.verifySignature = function nativeVerifySignature(this: SpendInternals, sig, pubkey, subscript) {
    const params: TransactionSignatureFormatParams = {
      sourceTXID: this.sourceTXID,
      sourceOutputIndex: this.sourceOutputIndex,
      sourceSatoshis: this.sourceSatoshis,
      transactionVersion: this.transactionVersion,
      otherInputs: this.otherInputs,
      outputs: this.outputs,
      inputIndex: this.inputIndex,
      subscript,
      inputSequence: this.inputSequence,
      lockTime: this.lockTime,
      scope: sig.scope,
      cache: this.sigHashCache,
    };
    if (TransactionSignature.usesOtdaSingleBug(params)) return sdkVerify.call(this, sig, pubkey, subscript);
    return verifyDigest(sha256d(TransactionSignature.formatBytes(params)), sig, pubkey);
  };
  return spend;
}

/** Distinct public keys kept parsed (a devnet sees a handful: the wallet's funding key, test keys). */
const PUBLIC_KEY_CACHE_SIZE = 1024;
let publicKeyCacheInstalled = false;

/**
 * Makes the sdk's `PublicKey.fromDER` remember the keys it decompressed, for this process. The
 * interpreter parses every input's public key twice (its encoding check, then OP_CHECKSIG), and
 * a compressed key costs a modular square root in JS BigInts (~0.35 ms here): with every record
 * spending the same funding key, that was ~12% of the node's CPU under the write benchmark.
 * The answer is the same (a fresh PublicKey on the same coordinates, so no caller shares an
 * instance); invalid encodings still throw, uncached. Installed by the devnet node only: a
 * process-wide change of a library's static, deliberate and idempotent.
 */
export function cachePublicKeyParsing(): void {
  if (publicKeyCacheInstalled) return;
  publicKeyCacheInstalled = true;
  const parse = SdkPublicKey.fromDER.bind(SdkPublicKey);
  const cache = new Map<string, PublicKey>();
  SdkPublicKey.fromDER = (bytes: number[]): PublicKey => {
    const key = Buffer.from(bytes).toString('hex');
    let known = cache.get(key);
    if (!known) {
      known = parse(bytes);
      if (cache.size >= PUBLIC_KEY_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(key, known);
    }
    return new SdkPublicKey(known.x, known.y);
  };
}

/** libsecp256k1's ECDSA check of a 32-byte digest (false for anything it cannot parse). */
export function verifyDigest(
  digest: Uint8Array,
  sig: Pick<TransactionSignature, 'r' | 's'>,
  pubkey: PublicKey,
): boolean {
  try {
    const compact = new Uint8Array(64);
    compact.set(sig.r.toArray('be', 32), 0);
    compact.set(sig.s.toArray('be', 32), 32);
    secp256k1.signatureNormalize(compact);
    return secp256k1.ecdsaVerify(compact, digest, Uint8Array.from(pubkey.encode(true) as number[]));
  } catch {
    // r or s out of range, or a point libsecp256k1 refuses: not a valid signature.
    return false;
  }
}

/** The sdk's sighash parameters (its type is not exported). */
type TransactionSignatureFormatParams = Parameters<typeof TransactionSignature.formatBytes>[0];

/** The members of the sdk's `Spend` that its own `verifySignature` reads (private in its types). */
interface SpendInternals {
  sourceTXID: string;
  sourceOutputIndex: number;
  sourceSatoshis: number;
  transactionVersion: number;
  otherInputs: TransactionSignatureFormatParams['otherInputs'];
  outputs: TransactionSignatureFormatParams['outputs'];
  inputIndex: number;
  inputSequence: number;
  lockTime: number;
  sigHashCache: TransactionSignatureFormatParams['cache'];
  verifySignature: (this: SpendInternals, sig: TransactionSignature, pubkey: PublicKey, subscript: Script) => boolean;
}
