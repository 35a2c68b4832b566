import { sign as nodeSign } from 'node:crypto';
import { BigNumber, Signature, TransactionSignature, UnlockingScript } from '@bsv/sdk';
import type { LockingScript, SignatureHashCache, TransactionInput, TransactionOutput } from '@bsv/sdk';
import { sha256, sha256d } from '@proofline/chain-domain';
import type { SigningKey } from './keys';
import { pushData } from './scripts';

/** SIGHASH_ALL | SIGHASH_FORKID: BSV's standard signature scope (BIP143-style preimage). */
export const SIGHASH_ALL_FORKID = TransactionSignature.SIGHASH_ALL | TransactionSignature.SIGHASH_FORKID;

/** What signing one input needs to know about the output it spends. */
export interface SpentOutput {
  readonly txId: string;
  readonly vout: number;
  readonly satoshis: number;
  readonly lockingScript: LockingScript;
  readonly key: SigningKey;
}

/**
 * Signs every P2PKH input synchronously (the sdk's `Transaction.sign()` is async only because
 * templates may be; the maths is not). `cache` shares hashPrevouts/hashSequence/hashOutputs
 * between inputs, so a 1 MiB data output is hashed once, not once per input.
 * @returns the unlocking scripts, in input order.
 */
export function signP2pkhInputs(spent: readonly SpentOutput[], outputs: TransactionOutput[], version: number, lockTime: number): UnlockingScript[] {
  // hashOutputs with OpenSSL: the sdk's JavaScript SHA-256 costs ~20 ms per MiB of record.
  const cache: SignatureHashCache = { hashOutputsAll: Array.from(sha256d(serializeOutputs(outputs))) };
  const bare: TransactionInput[] = spent.map((s) => ({ sourceTXID: s.txId, sourceOutputIndex: s.vout, sequence: 0xffffffff }));
  return spent.map((s, inputIndex) => {
    const preimage = TransactionSignature.formatBytes({
      sourceTXID: s.txId,
      sourceOutputIndex: s.vout,
      sourceSatoshis: s.satoshis,
      transactionVersion: version,
      otherInputs: bare.filter((_, j) => j !== inputIndex),
      outputs,
      inputIndex,
      subscript: s.lockingScript,
      inputSequence: 0xffffffff,
      lockTime,
      scope: SIGHASH_ALL_FORKID,
      cache,
    });
    const raw = ecdsaSign(s.key, preimage);
    const sig = new TransactionSignature(raw.r, raw.s, SIGHASH_ALL_FORKID).toChecksigFormat();
    const bytes = Buffer.concat([pushData(Uint8Array.from(sig)), pushData(Uint8Array.from(s.key.publicKey))]);
    return new UnlockingScript([], Uint8Array.from(bytes), undefined, false);
  });
}

/** secp256k1 order n and n/2 (BIP62 low-S: a signature with s > n/2 is non-standard). */
const N = new BigNumber('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141', 16);
const HALF_N = new BigNumber('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0', 16);

/**
 * ECDSA over sha256d(preimage) with OpenSSL (node:crypto hashes `sha256(preimage)` once more),
 * normalized to low S. Randomized k (OpenSSL) instead of the sdk's RFC 6979: both are valid;
 * the test suite checks every signature with the sdk's script interpreter.
 */
function ecdsaSign(key: SigningKey, preimage: Uint8Array): Signature {
  const der = nodeSign('sha256', sha256(preimage), { key: key.nodeKey, dsaEncoding: 'der' });
  const sig = Signature.fromDER(Array.from(der));
  return sig.s.cmp(HALF_N) > 0 ? new Signature(sig.r, N.sub(sig.s)) : sig;
}

/** Outputs as serialized in a transaction (the BIP143 hashOutputs message). */
function serializeOutputs(outputs: readonly TransactionOutput[]): Buffer {
  const parts: Uint8Array[] = [];
  for (const o of outputs) {
    const script = o.lockingScript.toUint8Array();
    const head = Buffer.alloc(8 + 9);
    head.writeBigUInt64LE(BigInt(o.satoshis ?? 0), 0);
    const n = script.length;
    let len: number;
    if (n < 0xfd) {
      head[8] = n;
      len = 9;
    } else if (n <= 0xffff) {
      head[8] = 0xfd;
      head.writeUInt16LE(n, 9);
      len = 11;
    } else {
      head[8] = 0xfe;
      head.writeUInt32LE(n, 9);
      len = 13;
    }
    parts.push(head.subarray(0, len), script);
  }
  return Buffer.concat(parts);
}
