import type { RecordTxKind } from '@proofline/chain-domain';
import { dataScriptBytes, readDataPushes } from './scripts';

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
