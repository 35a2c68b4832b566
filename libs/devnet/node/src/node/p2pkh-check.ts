import { hash } from 'node:crypto';
import secp256k1 from 'secp256k1';
import { sha256d } from '@proofline/chain-domain';
import type { WireOutput, WireTx } from './tx-format';

/**
 * The node's check of a standard pay-to-public-key-hash spend without the sdk's interpreter.
 *
 * Nearly every input the devnet sees spends a P2PKH output with `<sig> <pubkey>` signed
 * SIGHASH_ALL|FORKID (records, change, funding splits). Running those through the interpreter
 * parses both scripts into chunk objects, builds each sighash through BigNumber-backed writers and
 * copies arrays at every step: under the write benchmark that was a quarter of the node's CPU,
 * of which the ECDSA equation itself was less than a third.
 *
 * {@link checkStandardP2pkh} answers `true` only when the spend is valid under every rule the
 * interpreter applies to such a spend, in strict (version 1) and relaxed (version 2) mode alike:
 * exactly two minimal direct pushes, a strict DER signature (BIP66) with a low S and the hash type
 * 0x41, a strictly encoded public key whose HASH160 is the output's, and the BIP143 (FORKID)
 * digest verified by libsecp256k1. It answers `false` for anything else: not a verdict, only
 * "not the fast case". The caller then runs the interpreter, which decides and names the reason.
 * So this check can only be wrong by accepting what the interpreter refuses, and
 * `p2pkh-check.spec.ts` holds the two side by side on valid spends and on every rule's breach.
 *
 * Kept apart from the service's signer (chain-bsv `sign.ts`) on purpose: the node is the
 * service's independent verifier, and a sighash shared by both would hide a bug in either.
 */

/** SIGHASH_ALL | SIGHASH_FORKID, the only hash type of the fast case. */
const SIGHASH_ALL_FORKID = 0x41;
/** The curve order n, halved: a low S is at most this (big-endian, 32 bytes). */
const HALF_ORDER = Buffer.from('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0', 'hex');

/**
 * The parts of a transaction's BIP143 preimages that all its inputs share (hashPrevouts,
 * hashSequence, hashOutputs), computed once per transaction on first use.
 */
export class ForkIdDigests {
  private shared: { readonly prevouts: Buffer; readonly sequences: Buffer; readonly outputs: Buffer } | null = null;
  private readonly outpoints: Buffer[];

  constructor(private readonly tx: WireTx) {
    this.outpoints = tx.inputs.map((input) => {
      const out = Buffer.allocUnsafe(36);
      // Display hex → internal byte order.
      Buffer.from(input.sourceTXID, 'hex').reverse().copy(out, 0);
      out.writeUInt32LE(input.sourceOutputIndex >>> 0, 32);
      return out;
    });
  }

  /** sha256d of the SIGHASH_ALL|FORKID preimage of input `index` spending `spent` (its script is the script code). */
  digest(index: number, spent: WireOutput): Buffer {
    const { tx } = this;
    const shared = (this.shared ??= {
      prevouts: sha256d(Buffer.concat(this.outpoints)),
      sequences: sha256d(sequencesOf(tx)),
      outputs: sha256d(serializeOutputs(tx.outputs)),
    });
    const script = spent.script;
    const input = tx.inputs[index];
    const outpoint = this.outpoints[index];
    if (!input || !outpoint) throw new Error(`no input ${index}`);
    const lenSize = varIntSize(script.length);
    const out = Buffer.allocUnsafe(4 + 32 + 32 + 36 + lenSize + script.length + 8 + 4 + 32 + 4 + 4);
    let at = out.writeUInt32LE(tx.version >>> 0, 0);
    at += shared.prevouts.copy(out, at);
    at += shared.sequences.copy(out, at);
    at += outpoint.copy(out, at);
    at = writeVarInt(out, at, script.length);
    at += script.copy(out, at);
    at = writeSatoshis(out, at, spent.satoshis);
    at = out.writeUInt32LE(input.sequence >>> 0, at);
    at += shared.outputs.copy(out, at);
    at = out.writeUInt32LE(tx.lockTime >>> 0, at);
    out.writeUInt32LE(SIGHASH_ALL_FORKID, at);
    return sha256d(out);
  }
}

/**
 * True when input `index` of `tx` is a valid standard P2PKH spend of `spent` (see the module
 * comment); false means "run the interpreter", never "invalid".
 */
export function checkStandardP2pkh(tx: WireTx, index: number, spent: WireOutput, digests: ForkIdDigests): boolean {
  const lock = spent.script;
  // OP_DUP OP_HASH160 <20 bytes> OP_EQUALVERIFY OP_CHECKSIG
  if (
    lock.length !== 25 ||
    lock[0] !== 0x76 ||
    lock[1] !== 0xa9 ||
    lock[2] !== 0x14 ||
    lock[23] !== 0x88 ||
    lock[24] !== 0xac
  )
    return false;
  const unlock = tx.inputs[index]?.script;
  if (!unlock || unlock.length < 2) return false;
  // <sig> <pubkey>, both as direct pushes (opcodes 1..75 push that many bytes: minimal for these sizes).
  const sigLen = unlock[0] as number;
  if (sigLen < 9 || sigLen > 73 || unlock.length < 2 + sigLen) return false;
  const keyLen = unlock[1 + sigLen] as number;
  if (unlock.length !== 2 + sigLen + keyLen) return false;
  const sig = unlock.subarray(1, 1 + sigLen);
  const key = unlock.subarray(2 + sigLen);
  if (sig[sigLen - 1] !== SIGHASH_ALL_FORKID) return false;
  if (!((keyLen === 33 && (key[0] === 0x02 || key[0] === 0x03)) || (keyLen === 65 && key[0] === 0x04))) return false;
  const compact = strictDerToCompact(sig.subarray(0, sigLen - 1));
  if (!compact || compact.subarray(32).compare(HALF_ORDER) > 0) return false;
  if (!hash('ripemd160', hash('sha256', key, 'buffer'), 'buffer').equals(lock.subarray(3, 23))) return false;
  try {
    return secp256k1.ecdsaVerify(compact, digests.digest(index, spent), key);
  } catch {
    // A key or signature libsecp256k1 cannot parse: the interpreter gives the verdict.
    return false;
  }
}

/**
 * r‖s (32 bytes each) of a DER signature that passes BIP66's strict encoding, or null. The same
 * rules as the interpreter's check (`isChecksigFormat`), on the signature without its hash type.
 */
export function strictDerToCompact(der: Buffer): Buffer | null {
  const len = der.length;
  if (len < 8 || len > 72 || der[0] !== 0x30 || der[1] !== len - 2 || der[2] !== 0x02) return null;
  const rLen = der[3] as number;
  if (rLen === 0 || 4 + rLen >= len || der[4 + rLen] !== 0x02) return null;
  const sLen = der[5 + rLen] as number;
  if (sLen === 0 || 6 + rLen + sLen !== len) return null;
  const r = der.subarray(4, 4 + rLen);
  const s = der.subarray(6 + rLen);
  if (!isCanonicalInteger(r) || !isCanonicalInteger(s)) return null;
  const out = Buffer.alloc(64);
  if (!placeInteger(r, out, 0) || !placeInteger(s, out, 32)) return null;
  return out;
}

/** Not negative, not padded with a zero byte it does not need. */
function isCanonicalInteger(v: Buffer): boolean {
  if (((v[0] as number) & 0x80) !== 0) return false;
  return !(v.length > 1 && v[0] === 0x00 && ((v[1] as number) & 0x80) === 0);
}

/** Writes a DER integer right-aligned into 32 bytes at `at`; false when it does not fit. */
function placeInteger(v: Buffer, out: Buffer, at: number): boolean {
  const bytes = v[0] === 0x00 ? v.subarray(1) : v;
  if (bytes.length > 32) return false;
  bytes.copy(out, at + 32 - bytes.length);
  return true;
}

function sequencesOf(tx: WireTx): Buffer {
  const out = Buffer.allocUnsafe(4 * tx.inputs.length);
  tx.inputs.forEach((input, i) => out.writeUInt32LE(input.sequence >>> 0, 4 * i));
  return out;
}

function serializeOutputs(outputs: readonly WireOutput[]): Buffer {
  const size = outputs.reduce((n, o) => n + 8 + varIntSize(o.script.length) + o.script.length, 0);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const o of outputs) {
    at = writeSatoshis(out, at, o.satoshis);
    at = writeVarInt(out, at, o.script.length);
    at += o.script.copy(out, at);
  }
  return out;
}

const varIntSize = (n: number): number => (n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9);

function writeVarInt(out: Buffer, at: number, n: number): number {
  if (n < 0xfd) return out.writeUInt8(n, at);
  if (n <= 0xffff) return out.writeUInt16LE(n, out.writeUInt8(0xfd, at));
  if (n <= 0xffffffff) return out.writeUInt32LE(n, out.writeUInt8(0xfe, at));
  return out.writeBigUInt64LE(BigInt(n), out.writeUInt8(0xff, at));
}

function writeSatoshis(out: Buffer, at: number, satoshis: number): number {
  // Amounts are safe integers (the reader refuses more than 21M BTC): two 32-bit halves, no BigInt.
  return out.writeUInt32LE(Math.floor(satoshis / 0x1_0000_0000), out.writeUInt32LE(satoshis % 0x1_0000_0000, at));
}
