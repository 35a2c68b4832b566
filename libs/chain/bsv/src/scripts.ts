import { LockingScript, OP } from '@bsv/sdk';
import type { RecordTxKind } from '@proofline/chain-domain';

/*
 * The script bytes of Proofline's transactions: minimal pushes, `OP_FALSE OP_RETURN` data outputs
 * and P2PKH outputs, and on them the record layout (the header output every record transaction
 * starts with). The package exports the layout; the script helpers stay inside it.
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
