import { toDisplayHex } from './block';

/*
 * BIP-239 Extended Format, written and read without a parser library: the builders write it
 * (`toExtendedFormat`); the record store (which keeps a record's standard serialization and,
 * beside it, EF's extension) and the submit batcher read it.
 *
 * EF: version (4), the marker `0000000000EF` (6), then the inputs, each followed by the satoshis
 * (8) and locking script (varint + bytes) of the output it spends, then the outputs and lock time
 * as usual. The standard serialization is the same bytes without the marker and those two fields;
 * the txId is sha256d of the standard serialization.
 */

const EF_MARKER = Buffer.from('0000000000ef', 'hex');

/** A script as bytes, or as an object that gives them (the sdk's scripts). */
type ScriptBytes = Uint8Array | { toUint8Array(): number[] | Uint8Array };

/** What EF carries about the output an input spends. */
export interface SpentOutputData {
  readonly satoshis: number;
  /** The output's locking script: bytes, or the sdk's script. */
  readonly lockingScript: ScriptBytes;
}

/** The little of a signed transaction EF writing reads (the sdk's `Transaction` fits). */
export interface EfTransaction {
  readonly version: number;
  readonly inputs: readonly {
    readonly sourceTXID?: string;
    readonly sourceOutputIndex: number;
    readonly unlockingScript?: { toUint8Array(): number[] | Uint8Array };
    readonly sequence?: number;
  }[];
  readonly outputs: readonly {
    readonly satoshis?: number;
    readonly lockingScript: { toUint8Array(): number[] | Uint8Array };
  }[];
  readonly lockTime: number;
}

/**
 * BIP-239 Extended Format: version, the marker `0000000000EF`, then each input followed by the
 * satoshis and locking script of the output it spends (`spent[i]` for input `i`), then outputs and
 * lock time as usual. Every transaction Proofline broadcasts is sent this way: ARC validates an EF
 * transaction from its own input data, without looking its parents up (a parent still in flight,
 * or in the same request, is then no reason for 460). Written by hand because the sdk's `toEF`
 * needs every parent transaction, which neither the pool nor the record store keeps.
 * @throws Error when `spent` does not name one output per input.
 */
export function toExtendedFormat(tx: EfTransaction, spent: readonly SpentOutputData[]): Buffer {
  if (spent.length !== tx.inputs.length) throw new Error('EF needs the spent output of every input');
  const parts: Buffer[] = [u32(tx.version), EF_MARKER, varInt(tx.inputs.length)];
  tx.inputs.forEach((input, i) => {
    const unlock = input.unlockingScript?.toUint8Array() ?? new Uint8Array(0);
    const out = spent[i] as SpentOutputData;
    const lock = Uint8Array.from(
      out.lockingScript instanceof Uint8Array ? out.lockingScript : out.lockingScript.toUint8Array(),
    );
    parts.push(
      Buffer.from(input.sourceTXID as string, 'hex').reverse(),
      u32(input.sourceOutputIndex),
      varInt(unlock.length),
      Buffer.from(unlock),
      u32(input.sequence ?? 0xffffffff),
      u64(out.satoshis),
      varInt(lock.length),
      Buffer.from(lock),
    );
  });
  parts.push(varInt(tx.outputs.length));
  for (const o of tx.outputs) {
    const script = o.lockingScript.toUint8Array();
    parts.push(u64(o.satoshis ?? 0), varInt(script.length), Buffer.from(script));
  }
  parts.push(u32(tx.lockTime));
  return Buffer.concat(parts);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
}

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}

/**
 * {@link toExtendedFormat} of a transaction already serialized: the same bytes from `raw` (its
 * standard serialization) and `spent`, without serializing the transaction again. The builders
 * have `raw` at hand, and writing the outputs again (a record's data output is most of the
 * transaction) was most of what EF cost a write.
 * @throws Error when `spent` does not name one output per input of `raw`.
 */
export function extendedFromStandard(raw: Uint8Array, spent: readonly SpentOutputData[]): Buffer {
  const parts: Buffer[] = [];
  for (const out of spent) {
    const lock = out.lockingScript instanceof Uint8Array ? out.lockingScript : out.lockingScript.toUint8Array();
    parts.push(u64(out.satoshis), varInt(lock.length), Buffer.from(lock));
  }
  return Buffer.from(withExtension(raw, Buffer.concat(parts)));
}

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

/** Bitcoin's variable-length integer (CompactSize), as the sdk's `Writer.writeVarIntNum` writes it. */
export function varInt(n: number): Buffer {
  if (n < 0xfd) return Buffer.from([n]);
  if (n <= 0xffff) {
    const b = Buffer.alloc(3);
    b[0] = 0xfd;
    b.writeUInt16LE(n, 1);
    return b;
  }
  if (n <= 0xffffffff) {
    const b = Buffer.alloc(5);
    b[0] = 0xfe;
    b.writeUInt32LE(n, 1);
    return b;
  }
  const b = Buffer.alloc(9);
  b[0] = 0xff;
  b.writeBigUInt64LE(BigInt(n), 1);
  return b;
}
