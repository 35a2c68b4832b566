import secp256k1 from 'secp256k1';
import { LockingScript, OP, Transaction, TransactionSignature, UnlockingScript } from '@bsv/sdk';
import type { TransactionInput, TransactionOutput } from '@bsv/sdk';
import type { RecordTxKind } from '@proofline/chain-domain';
import { extendedFromStandard, sha256d, toDisplayHex } from '@proofline/chain-domain';
import type { SigningKey } from './keys';

/*
 * The scripts of Proofline's transactions: minimal pushes, `OP_FALSE OP_RETURN` data outputs
 * and P2PKH outputs, and on them the record layout (the header output every record transaction
 * starts with); then the P2PKH unlocking scripts, signed, that make a transaction of them. The
 * package exports the layout; the script helpers and the signing stay inside it.
 */

/** Bytes of a minimal push of `data` (OP_0, direct length, OP_PUSHDATA1/2/4). */
export function pushData(data: Uint8Array): Buffer {
  const n = data.length;
  let prefix: Buffer;
  if (n === 0) prefix = Buffer.from([OP.OP_0]);
  else if (n < OP.OP_PUSHDATA1) prefix = Buffer.from([n]);
  else if (n <= 0xff) prefix = Buffer.from([OP.OP_PUSHDATA1, n]);
  else if (n <= 0xffff) {
    prefix = Buffer.alloc(3);
    prefix[0] = OP.OP_PUSHDATA2;
    prefix.writeUInt16LE(n, 1);
  } else {
    prefix = Buffer.alloc(5);
    prefix[0] = OP.OP_PUSHDATA4;
    prefix.writeUInt32LE(n, 1);
  }
  return Buffer.concat([prefix, data]);
}

/** `OP_FALSE OP_RETURN <push>...` as raw bytes (provably unspendable data output). */
export function dataScriptBytes(pushes: readonly Uint8Array[]): Buffer {
  return Buffer.concat([Buffer.from([OP.OP_FALSE, OP.OP_RETURN]), ...pushes.map(pushData)]);
}

/** `OP_DUP OP_HASH160 <20 bytes> OP_EQUALVERIFY OP_CHECKSIG`. */
export function p2pkhScriptBytes(pubKeyHash: readonly number[]): Buffer {
  if (pubKeyHash.length !== 20) throw new Error('P2PKH needs a 20-byte hash');
  return Buffer.from([OP.OP_DUP, OP.OP_HASH160, 20, ...pubKeyHash, OP.OP_EQUALVERIFY, OP.OP_CHECKSIG]);
}

/** Wraps raw bytes without re-parsing them (the sdk parses lazily), so 1 MiB records stay cheap. */
export function lockingScriptOf(bytes: Uint8Array): LockingScript {
  return new LockingScript([], Uint8Array.from(bytes), undefined, false);
}

/**
 * Reads the pushes of an `OP_FALSE OP_RETURN <push>...` script; null when the script is not
 * exactly that shape (our own parser: the sdk folds everything after OP_RETURN into one chunk).
 */
export function readDataPushes(script: Uint8Array): Buffer[] | null {
  const b = Buffer.from(script.buffer, script.byteOffset, script.byteLength);
  if (b.length < 2 || b[0] !== OP.OP_FALSE || b[1] !== OP.OP_RETURN) return null;
  const pushes: Buffer[] = [];
  let i = 2;
  while (i < b.length) {
    const op = b[i] as number;
    i += 1;
    let len: number;
    if (op === OP.OP_0) len = 0;
    else if (op < OP.OP_PUSHDATA1) len = op;
    else if (op === OP.OP_PUSHDATA1 && i + 1 <= b.length) {
      len = b.readUInt8(i);
      i += 1;
    } else if (op === OP.OP_PUSHDATA2 && i + 2 <= b.length) {
      len = b.readUInt16LE(i);
      i += 2;
    } else if (op === OP.OP_PUSHDATA4 && i + 4 <= b.length) {
      len = b.readUInt32LE(i);
      i += 4;
    } else return null;
    if (i + len > b.length) return null;
    pushes.push(b.subarray(i, i + len));
    i += len;
  }
  return pushes;
}

/**
 * The on-chain layout of a record transaction (DESIGN §2):
 *
 * - output 0: `OP_FALSE OP_RETURN "proofline" <kind> <layout version> <content type> <funding nonce>`
 * - output 1: `OP_FALSE OP_RETURN <record bytes>` (absent for `delete`)
 * - output 2: for a linked `create`/`update`, a P2PKH "fund for next" output the next update or
 *   delete spends as its input 0
 * - inputs: for `update`/`delete`, input 0 spends the previous record's output 2; then the
 *   funding wallet's pool UTXOs (P2PKH to the funding key)
 */
export const PROTOCOL_TAG = 'proofline';
export const LAYOUT_VERSION = '1';
export const DATA_VOUT = 1;
export const LINK_VOUT = 2;
export const FUNDING_NONCE_BYTES = 16;

const KINDS: readonly RecordTxKind[] = ['independent', 'create', 'update', 'delete'];

export interface RecordHeader {
  readonly kind: RecordTxKind;
  readonly version: string;
  /** Empty for a delete. */
  readonly contentType: string;
  /** 16 random bytes, hex. Layout version 1 requires the push (decoders refuse a header without it); no input refers to it. */
  readonly fundingNonce: string;
}

export function headerScriptBytes(h: RecordHeader): Buffer {
  return dataScriptBytes([
    Buffer.from(PROTOCOL_TAG, 'utf8'),
    Buffer.from(h.kind, 'utf8'),
    Buffer.from(h.version, 'utf8'),
    Buffer.from(h.contentType, 'utf8'),
    Buffer.from(h.fundingNonce, 'hex'),
  ]);
}

/** Decodes output 0 of a record transaction; null when the script is not a Proofline header. */
export function decodeHeaderScript(script: Uint8Array): RecordHeader | null {
  const pushes = readDataPushes(script);
  if (!pushes || pushes.length !== 5) return null;
  const [tag, kind, version, contentType, nonce] = pushes as [Buffer, Buffer, Buffer, Buffer, Buffer];
  const k = kind.toString('utf8') as RecordTxKind;
  if (tag.toString('utf8') !== PROTOCOL_TAG || !KINDS.includes(k) || nonce.length !== FUNDING_NONCE_BYTES) return null;
  return {
    kind: k,
    version: version.toString('utf8'),
    contentType: contentType.toString('utf8'),
    fundingNonce: nonce.toString('hex'),
  };
}

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

/** Every input this builder signs has the final sequence number. */
const SEQUENCE_FINAL = 0xffffffff;
/** Version and lock time of every transaction the builders make. */
const VERSION = 1;
const LOCK_TIME = 0;

/** A transaction the builders signed: its standard serialization, its txId and its Extended Format (what is broadcast). */
export interface SignedTransaction {
  readonly raw: Buffer;
  readonly txId: string;
  readonly ef: Buffer;
}

/**
 * The transaction spending `spent` (in input order, every input P2PKH, final sequence) to
 * `outputs`, signed ({@link signP2pkhInputs}), version 1, lock time 0.
 */
export function signTransaction(spent: readonly SpentOutput[], outputs: TransactionOutput[]): SignedTransaction {
  const unlocks = signP2pkhInputs(spent, outputs, VERSION, LOCK_TIME);
  const inputs: TransactionInput[] = spent.map((s, i) => ({
    sourceTXID: s.txId,
    sourceOutputIndex: s.vout,
    sequence: SEQUENCE_FINAL,
    unlockingScript: unlocks[i],
  }));
  const raw = Buffer.from(new Transaction(VERSION, inputs, outputs, LOCK_TIME).toUint8Array());
  // EF from the serialization already made: writing the outputs again (a record's data output is
  // most of the transaction) was most of what EF cost a write.
  return { raw, txId: toDisplayHex(sha256d(raw)), ef: extendedFromStandard(raw, spent) };
}

/**
 * Signs every P2PKH input synchronously with libsecp256k1 (the `secp256k1` package's native
 * binding: ~65 µs a signature here against ~490 µs through node:crypto's generic OpenSSL curve).
 * The BIP143/FORKID preimage is assembled in one Buffer per input from hashes computed once
 * per transaction (hashPrevouts, hashSequence, hashOutputs), so a 1 MiB data output is hashed
 * once, not once per input, and no BigNumber or number[] is built per write.
 * @returns the unlocking scripts, in input order.
 */
export function signP2pkhInputs(
  spent: readonly SpentOutput[],
  outputs: TransactionOutput[],
  version: number,
  lockTime: number,
): UnlockingScript[] {
  const hashPrevouts = sha256d(serializeOutpoints(spent));
  const hashSequence = sha256d(Buffer.alloc(4 * spent.length, 0xff));
  const hashOutputs = sha256d(serializeOutputs(outputs));
  return spent.map((s) => {
    const preimage = sighashPreimage(s, { version, lockTime, hashPrevouts, hashSequence, hashOutputs });
    const key = s.key;
    const der = secp256k1.signatureExport(secp256k1.ecdsaSign(sha256d(preimage), secretOf(key)).signature);
    return new UnlockingScript([], p2pkhUnlockBytes(der, key.publicKey), undefined, false);
  });
}

/** The per-transaction parts of a BIP143 preimage. */
interface PreimageParts {
  readonly version: number;
  readonly lockTime: number;
  readonly hashPrevouts: Buffer;
  readonly hashSequence: Buffer;
  readonly hashOutputs: Buffer;
}

/**
 * BIP143 preimage (BSV's SIGHASH_FORKID digest) of one input spending `s`, scope ALL|FORKID:
 * version | hashPrevouts | hashSequence | outpoint | scriptCode | value | sequence | hashOutputs |
 * lockTime | sighash type. Exported for the spec, which compares it with the sdk's.
 */
export function sighashPreimage(
  s: Pick<SpentOutput, 'txId' | 'vout' | 'satoshis' | 'lockingScript'>,
  parts: PreimageParts,
): Buffer {
  const script = s.lockingScript.toUint8Array();
  const lenSize = varIntSize(script.length);
  const out = Buffer.allocUnsafe(4 + 32 + 32 + 36 + lenSize + script.length + 8 + 4 + 32 + 4 + 4);
  let at = out.writeUInt32LE(parts.version >>> 0, 0);
  at += parts.hashPrevouts.copy(out, at);
  at += parts.hashSequence.copy(out, at);
  at = writeOutpoint(out, at, s.txId, s.vout);
  at = writeVarInt(out, at, script.length);
  out.set(script, at);
  at += script.length;
  at = writeSatoshis(out, at, s.satoshis);
  at = out.writeUInt32LE(SEQUENCE_FINAL, at);
  at += parts.hashOutputs.copy(out, at);
  at = out.writeUInt32LE(parts.lockTime >>> 0, at);
  out.writeUInt32LE(SIGHASH_ALL_FORKID >>> 0, at);
  return out;
}

/** `push(DER signature ‖ sighash type) push(compressed public key)`: both pushes are < 76 bytes. */
function p2pkhUnlockBytes(der: Uint8Array, publicKey: readonly number[]): Uint8Array {
  const out = new Uint8Array(1 + der.length + 1 + 1 + publicKey.length);
  out[0] = der.length + 1;
  out.set(der, 1);
  out[1 + der.length] = SIGHASH_ALL_FORKID;
  out[2 + der.length] = publicKey.length;
  out.set(publicKey, 3 + der.length);
  return out;
}

/** The 32-byte secret of a key, derived once per key (the sdk keeps it as a BigNumber). */
const secrets = new WeakMap<SigningKey, Uint8Array>();
function secretOf(key: SigningKey): Uint8Array {
  let secret = secrets.get(key);
  if (!secret) {
    secret = Uint8Array.from(key.privateKey.toArray('be', 32));
    if (!secp256k1.privateKeyVerify(secret)) throw new Error('invalid secp256k1 private key');
    secrets.set(key, secret);
  }
  return secret;
}

const varIntSize = (n: number): number => (n < 0xfd ? 1 : n <= 0xffff ? 3 : 5);

function writeVarInt(out: Buffer, at: number, n: number): number {
  if (n < 0xfd) return out.writeUInt8(n, at);
  if (n <= 0xffff) return out.writeUInt16LE(n, out.writeUInt8(0xfd, at));
  return out.writeUInt32LE(n, out.writeUInt8(0xfe, at));
}

/** 8-byte little-endian amount without a BigInt (satoshi values are safe integers). */
function writeSatoshis(out: Buffer, at: number, satoshis: number): number {
  if (!Number.isSafeInteger(satoshis) || satoshis < 0) throw new Error(`bad satoshi amount ${satoshis}`);
  const next = out.writeUInt32LE(satoshis % 0x1_0000_0000, at);
  return out.writeUInt32LE(Math.floor(satoshis / 0x1_0000_0000), next);
}

/** txid as stored in a transaction (reversed display hex) followed by the output index. */
function writeOutpoint(out: Buffer, at: number, txId: string, vout: number): number {
  if (out.write(txId, at, 32, 'hex') !== 32) throw new Error(`bad txid ${txId}`);
  out.subarray(at, at + 32).reverse();
  return out.writeUInt32LE(vout >>> 0, at + 32);
}

function serializeOutpoints(spent: readonly SpentOutput[]): Buffer {
  const out = Buffer.allocUnsafe(36 * spent.length);
  spent.forEach((s, i) => writeOutpoint(out, 36 * i, s.txId, s.vout));
  return out;
}

/** Outputs as serialized in a transaction (the BIP143 hashOutputs message). */
function serializeOutputs(outputs: readonly TransactionOutput[]): Buffer {
  const scripts = outputs.map((o) => o.lockingScript.toUint8Array());
  const size = scripts.reduce((n, script) => n + 8 + varIntSize(script.length) + script.length, 0);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  outputs.forEach((o, i) => {
    const script = scripts[i] as Uint8Array;
    at = writeSatoshis(out, at, o.satoshis ?? 0);
    at = writeVarInt(out, at, script.length);
    out.set(script, at);
    at += script.length;
  });
  return out;
}
