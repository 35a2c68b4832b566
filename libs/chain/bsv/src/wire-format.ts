import type { Transaction } from '@bsv/sdk';

// The byte encodings this lib writes by hand rather than through the sdk: Bitcoin's CompactSize
// integer and BIP-239 Extended Format (the form every transaction Proofline broadcasts is sent in).

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

/** What EF carries about the output an input spends. */
export interface SpentOutputData {
  readonly satoshis: number;
  /** The output's locking script: bytes, or the sdk's script. */
  readonly lockingScript: Uint8Array | { toUint8Array(): number[] | Uint8Array };
}

/**
 * BIP-239 Extended Format: version, the marker `0000000000EF`, then each input followed by the
 * satoshis and locking script of the output it spends (`spent[i]` for input `i`), then outputs and
 * lock time as usual. Every transaction Proofline broadcasts is sent this way: ARC validates an EF
 * transaction from its own input data, without looking its parents up (a parent still in flight,
 * or in the same request, is then no reason for 460). Written here because the sdk's `toEF` needs
 * every parent transaction, which neither the pool nor the record store keeps.
 * @throws Error when `spent` does not name one output per input.
 */
export function toExtendedFormat(tx: Transaction, spent: readonly SpentOutputData[]): Buffer {
  if (spent.length !== tx.inputs.length) throw new Error('EF needs the spent output of every input');
  const parts: Buffer[] = [u32(tx.version), Buffer.from('0000000000ef', 'hex'), varInt(tx.inputs.length)];
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
