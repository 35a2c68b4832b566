import { toDisplayHex } from './hash';

/*
 * BIP-239 Extended Format, read without a parser library: what the record store (which keeps a
 * record's standard serialization and, beside it, EF's extension) and the submit batcher need.
 * Writing EF from a transaction needs the sdk and lives in chain-bsv (`toExtendedFormat`).
 *
 * EF: version (4), the marker `0000000000EF` (6), then the inputs, each followed by the satoshis
 * (8) and locking script (varint + bytes) of the output it spends, then the outputs and lock time
 * as usual. The standard serialization is the same bytes without the marker and those two fields;
 * the txId is sha256d of the standard serialization.
 */

const EF_MARKER = Buffer.from('0000000000ef', 'hex');

/** True when `tx` carries BIP-239's marker after its version. */
export function isExtendedFormat(tx: Uint8Array): boolean {
  return tx.length >= 10 && Buffer.from(tx.buffer, tx.byteOffset + 4, 6).equals(EF_MARKER);
}

/**
 * The standard serialization of `tx` (what the txId hashes, what receipts carry): EF without its
 * extension; any other bytes unchanged (records stored before EF).
 * @throws Error when EF bytes are truncated.
 */
export function standardFromExtended(tx: Uint8Array): Uint8Array {
  if (!isExtendedFormat(tx)) return tx;
  const parts: Uint8Array[] = [tx.subarray(0, 4)];
  const rest = splitExtended(tx, (standard) => parts.push(standard));
  parts.push(rest);
  return Buffer.concat(parts);
}

/**
 * What EF adds to the standard serialization: per input, in order, the satoshis (8) and locking
 * script (varint + bytes) of the output it spends. Stored beside the standard serialization, it
 * gives the EF back with {@link withExtension}.
 * @throws Error when `ef` is not Extended Format or is truncated.
 */
export function extensionOf(ef: Uint8Array): Uint8Array {
  if (!isExtendedFormat(ef)) throw new Error('not Extended Format');
  const parts: Uint8Array[] = [];
  splitExtended(ef, (_, extension) => parts.push(extension));
  return Buffer.concat(parts);
}

/**
 * Walks EF's inputs: `each(standard, extension)` per input, in order — the standard bytes since the
 * previous extension (the input count before the first input), then the input's extension.
 * Returns the bytes after the last extension (outputs and lock time).
 */
function splitExtended(ef: Uint8Array, each: (standard: Uint8Array, extension: Uint8Array) => void): Uint8Array {
  const r = new Reader(ef, 10);
  let from = r.pos;
  const inputs = r.varInt();
  for (let i = 0; i < inputs; i++) {
    r.input();
    const at = r.pos;
    r.spentOutput();
    each(ef.subarray(from, at), ef.subarray(at, r.pos));
    from = r.pos;
  }
  r.end();
  return ef.subarray(from);
}

/**
 * The Extended Format of the standard serialization `raw`, from its {@link extensionOf}.
 * @throws Error when either is truncated or the extension does not cover every input exactly.
 */
export function withExtension(raw: Uint8Array, extension: Uint8Array): Uint8Array {
  const r = new Reader(raw, 4);
  const x = new Reader(extension, 0);
  const parts: Uint8Array[] = [raw.subarray(0, 4), EF_MARKER];
  const inputsAt = r.pos;
  const inputs = r.varInt();
  let from = inputsAt;
  for (let i = 0; i < inputs; i++) {
    r.input();
    parts.push(raw.subarray(from, r.pos));
    from = r.pos;
    const at = x.pos;
    x.spentOutput();
    parts.push(extension.subarray(at, x.pos));
  }
  if (x.pos !== extension.length) throw new Error('the EF extension does not match the transaction');
  parts.push(raw.subarray(from));
  return Buffer.concat(parts);
}

/**
 * The txIds (display hex) of the outputs `tx` spends, in input order: EF or the standard
 * serialization.
 * @throws Error when the bytes are truncated.
 */
export function spentTxIds(tx: Uint8Array): string[] {
  const extended = isExtendedFormat(tx);
  const r = new Reader(tx, extended ? 10 : 4);
  const inputs = r.varInt();
  const out: string[] = [];
  for (let i = 0; i < inputs; i++) {
    out.push(toDisplayHex(r.take(32)));
    r.pos -= 32;
    r.input();
    if (extended) r.spentOutput();
  }
  return out;
}

class Reader {
  constructor(
    private readonly bytes: Uint8Array,
    public pos: number,
  ) {}

  take(n: number): Uint8Array {
    this.need(n);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }

  /** An input: outpoint (36), unlocking script (varint + bytes), sequence (4). */
  input(): void {
    this.skip(36);
    this.skip(this.varInt());
    this.skip(4);
  }

  /** EF's data of an input: satoshis (8) and locking script (varint + bytes) of the output it spends. */
  spentOutput(): void {
    this.skip(8);
    this.skip(this.varInt());
  }

  varInt(): number {
    this.need(1);
    const first = this.bytes[this.pos] as number;
    this.pos += 1;
    if (first < 0xfd) return first;
    const width = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
    const b = Buffer.from(this.take(width));
    return width === 2 ? b.readUInt16LE(0) : width === 4 ? b.readUInt32LE(0) : Number(b.readBigUInt64LE(0));
  }

  end(): void {
    // Outputs and lock time follow unchanged: only check that there is something left to copy.
    this.need(5);
  }

  private need(n: number): void {
    if (this.pos + n > this.bytes.length) throw new Error('truncated transaction');
  }
}
