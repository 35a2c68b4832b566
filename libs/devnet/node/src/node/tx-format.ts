import { sha256d, toDisplayHex } from '@proofline/chain-domain';

/**
 * Reading submitted transactions the way ARC does: raw or Extended Format (BIP-239), from hex or
 * bytes, one or several back to back. A strict byte walker (not the sdk's reader, which does not
 * fail on short reads) so that truncated and trailing bytes are always "malformed" (ARC 463).
 */

/** The EF marker after the 4-byte version: `0000000000EF`. */
const EF_MARKER = Buffer.from('0000000000ef', 'hex');

/** One input as serialized (txid in display hex). */
export interface WireInput {
  readonly sourceTXID: string;
  readonly sourceOutputIndex: number;
  readonly script: Buffer;
  readonly sequence: number;
}

/** One output as serialized. */
export interface WireOutput {
  readonly satoshis: number;
  readonly script: Buffer;
}

/** A transaction's fields, read without building script objects (a 1 MiB data output stays bytes). */
export interface WireTx {
  readonly version: number;
  readonly inputs: readonly WireInput[];
  readonly outputs: readonly WireOutput[];
  readonly lockTime: number;
}

/** One submitted transaction: its plain serialization, plus what EF said about the outputs it spends. */
export interface SubmittedTx {
  /** The standard serialization (EF data stripped), hex. */
  readonly rawHex: string;
  /** Per input, the previous output as EF carried it; null for a raw submission. */
  readonly efInputs: readonly { readonly satoshis: number; readonly lockingScriptHex: string }[] | null;
  readonly wire: WireTx;
}

/** The bytes are not a transaction (ARC 463). */
export class MalformedTransactionError extends Error {
  override readonly name = 'MalformedTransactionError';
  /**
   * sha256d of the bytes when they are hex and not EF-marked: the txId a client computed for the
   * raw bytes it sent, so a `/v1/txs` answer can be matched by txid.
   */
  constructor(
    message: string,
    readonly txid: string | null = null,
  ) {
    super(message);
  }
}

class Walker {
  constructor(
    readonly buf: Buffer,
    public pos: number,
  ) {}

  take(n: number): Buffer {
    if (n < 0 || this.pos + n > this.buf.length) throw new MalformedTransactionError('truncated transaction');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  varInt(): number {
    const first = this.take(1)[0] as number;
    if (first < 0xfd) return first;
    if (first === 0xfd) return this.take(2).readUInt16LE(0);
    if (first === 0xfe) return this.take(4).readUInt32LE(0);
    const big = this.take(8).readBigUInt64LE(0);
    if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new MalformedTransactionError('length out of range');
    return Number(big);
  }

  satoshis(): number {
    const v = this.take(8).readBigUInt64LE(0);
    if (v > 21_000_000n * 100_000_000n) throw new MalformedTransactionError('output value out of range');
    return Number(v);
  }
}

/** True when `buf` at `pos` starts an Extended Format transaction. */
export function isExtendedFormat(buf: Buffer, pos = 0): boolean {
  return buf.length >= pos + 10 && buf.subarray(pos + 4, pos + 10).equals(EF_MARKER);
}

/**
 * Reads one transaction (raw or EF) starting at `pos`.
 * @returns the transaction and the position after it.
 * @throws MalformedTransactionError on truncated data, no inputs or no outputs.
 */
export function readTransaction(buf: Buffer, pos = 0): { tx: SubmittedTx; end: number } {
  const ef = isExtendedFormat(buf, pos);
  const w = new Walker(buf, pos);
  const versionBytes = w.take(4);
  const parts: Buffer[] = [versionBytes];
  if (ef) w.take(6);
  const inputsAt = w.pos;
  const nIn = w.varInt();
  parts.push(buf.subarray(inputsAt, w.pos));
  if (nIn === 0) throw new MalformedTransactionError('a transaction needs inputs');
  const efInputs: { satoshis: number; lockingScriptHex: string }[] = [];
  const inputs: WireInput[] = [];
  for (let i = 0; i < nIn; i++) {
    const start = w.pos;
    const outpoint = w.take(36);
    const script = w.take(w.varInt());
    const sequence = w.take(4).readUInt32LE(0);
    parts.push(buf.subarray(start, w.pos));
    inputs.push({
      sourceTXID: Buffer.from(outpoint.subarray(0, 32)).reverse().toString('hex'),
      sourceOutputIndex: outpoint.readUInt32LE(32),
      script,
      sequence,
    });
    if (ef) {
      const satoshis = w.satoshis();
      efInputs.push({ satoshis, lockingScriptHex: w.take(w.varInt()).toString('hex') });
    }
  }
  const outputsAt = w.pos;
  const nOut = w.varInt();
  if (nOut === 0) throw new MalformedTransactionError('a transaction needs outputs');
  const outputs: WireOutput[] = [];
  for (let i = 0; i < nOut; i++) {
    const satoshis = w.satoshis();
    outputs.push({ satoshis, script: w.take(w.varInt()) });
  }
  const lockTime = w.take(4).readUInt32LE(0);
  parts.push(buf.subarray(outputsAt, w.pos));
  const wire: WireTx = { version: versionBytes.readUInt32LE(0), inputs, outputs, lockTime };
  return { tx: { rawHex: Buffer.concat(parts).toString('hex'), efInputs: ef ? efInputs : null, wire }, end: w.pos };
}

/**
 * Exactly one transaction from hex (raw or EF).
 * @throws MalformedTransactionError when it is not hex, or not exactly one transaction.
 */
export function transactionFromHex(hex: string): SubmittedTx {
  const clean = hex.trim();
  if (clean.length === 0 || clean.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(clean))
    throw new MalformedTransactionError('not hex');
  return transactionFromBytes(Buffer.from(clean, 'hex'));
}

/** Exactly one transaction from bytes. @throws MalformedTransactionError */
export function transactionFromBytes(buf: Buffer): SubmittedTx {
  try {
    const { tx, end } = readTransaction(buf, 0);
    if (end !== buf.length) throw new MalformedTransactionError('trailing bytes after the transaction');
    return tx;
  } catch (e) {
    if (!(e instanceof MalformedTransactionError) || buf.length === 0 || isExtendedFormat(buf)) throw e;
    throw new MalformedTransactionError(e.message, toDisplayHex(sha256d(buf)));
  }
}

/** Transactions back to back (the `application/octet-stream` form of `/v1/txs`). @throws MalformedTransactionError */
export function transactionsFromBytes(buf: Buffer): SubmittedTx[] {
  const out: SubmittedTx[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const { tx, end } = readTransaction(buf, pos);
    out.push(tx);
    pos = end;
  }
  return out;
}
