import { LockingScript, OP } from '@bsv/sdk';

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
