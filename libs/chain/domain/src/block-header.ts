import { fromDisplayHex, sha256d, toDisplayHex } from './hash';

/** A Bitcoin block header; hashes in display (reversed) hex, time in Unix seconds. */
export interface BlockHeader {
  readonly version: number;
  readonly prevHash: string;
  readonly merkleRoot: string;
  readonly time: number;
  readonly bits: number;
  readonly nonce: number;
}

export const HEADER_BYTES = 80;
/** Regtest's minimum difficulty: about every second nonce meets it. */
export const REGTEST_BITS = 0x207fffff;
export const ZERO_HASH = '0'.repeat(64);

/** The 80-byte serialization (little-endian integers, hashes in internal order). */
export function serializeHeader(h: BlockHeader): Buffer {
  const out = Buffer.alloc(HEADER_BYTES);
  out.writeInt32LE(h.version, 0);
  fromDisplayHex(h.prevHash).copy(out, 4);
  fromDisplayHex(h.merkleRoot).copy(out, 36);
  out.writeUInt32LE(h.time, 68);
  out.writeUInt32LE(h.bits, 72);
  out.writeUInt32LE(h.nonce, 76);
  return out;
}

/**
 * Parses an 80-byte header given as hex or bytes.
 * @throws Error when it is not exactly 80 bytes of hex.
 */
export function parseHeader(header: string | Uint8Array): BlockHeader {
  const bytes = typeof header === 'string' ? hexBytes(header) : Buffer.from(header);
  if (bytes.length !== HEADER_BYTES) throw new Error(`a block header is ${HEADER_BYTES} bytes, got ${bytes.length}`);
  return {
    version: bytes.readInt32LE(0),
    prevHash: toDisplayHex(bytes.subarray(4, 36)),
    merkleRoot: toDisplayHex(bytes.subarray(36, 68)),
    time: bytes.readUInt32LE(68),
    bits: bytes.readUInt32LE(72),
    nonce: bytes.readUInt32LE(76),
  };
}

function hexBytes(hex: string): Buffer {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new Error('header is not hex');
  return Buffer.from(hex, 'hex');
}

/** Block hash (display hex) = reversed sha256d of the 80 header bytes. */
export function blockHash(header: BlockHeader | string | Uint8Array): string {
  const bytes =
    typeof header === 'string' ? hexBytes(header) : header instanceof Uint8Array ? header : serializeHeader(header);
  return toDisplayHex(sha256d(bytes));
}

/** What a header says about itself, worked out once: its fields, its hash, whether it meets its target. */
export interface HeaderFacts {
  readonly header: BlockHeader;
  readonly hash: string;
  readonly meetsTarget: boolean;
}

/** Headers' facts kept per process (a verifier sees a few blocks at a time). */
const HEADER_FACTS_KEPT = 64;
const headerFactsKept = new Map<string, HeaderFacts>();

/**
 * {@link parseHeader}, {@link blockHash} and {@link meetsTarget} of one header, remembered by its
 * hex: the proofs of one block's records are all checked against the same header, and each check
 * hashed it three times. Pure (a header's facts never change), so remembering changes no answer.
 * @throws Error like {@link parseHeader} (a malformed header is never remembered).
 */
export function headerFacts(hex: string): HeaderFacts {
  const known = headerFactsKept.get(hex);
  if (known) return known;
  const header = Object.freeze(parseHeader(hex));
  const hash = blockHash(hex);
  const facts: HeaderFacts = Object.freeze({ header, hash, meetsTarget: hashMeetsBits(hash, header.bits) });
  if (headerFactsKept.size >= HEADER_FACTS_KEPT) headerFactsKept.delete(headerFactsKept.keys().next().value as string);
  headerFactsKept.set(hex, facts);
  return facts;
}

/** The proof-of-work target encoded by compact `bits`. */
export function targetFromBits(bits: number): bigint {
  const exponent = bits >>> 24;
  const mantissa = BigInt(bits & 0x007fffff);
  return exponent <= 3 ? mantissa >> BigInt(8 * (3 - exponent)) : mantissa << BigInt(8 * (exponent - 3));
}

/** True when the header's hash, as a number, does not exceed its target. */
export function meetsTarget(header: BlockHeader): boolean {
  return hashMeetsBits(blockHash(header), header.bits);
}

/** A block hash (display hex) read as a number does not exceed the target `bits` encode. */
function hashMeetsBits(hash: string, bits: number): boolean {
  return BigInt(`0x${hash}`) <= targetFromBits(bits);
}

/**
 * Searches nonces from `header.nonce` until the hash meets the target (trivial at regtest bits).
 * @throws Error when the 32-bit nonce space is exhausted (never at regtest difficulty).
 */
export function mineHeader(header: BlockHeader): { header: BlockHeader; hash: string; hex: string } {
  const bytes = serializeHeader(header);
  const target = targetFromBits(header.bits);
  for (let nonce = header.nonce; nonce <= 0xffffffff; nonce++) {
    bytes.writeUInt32LE(nonce, 76);
    const hash = toDisplayHex(sha256d(bytes));
    if (BigInt(`0x${hash}`) <= target) return { header: { ...header, nonce }, hash, hex: bytes.toString('hex') };
  }
  throw new Error('nonce space exhausted');
}

/** The fields of a header as WhatsOnChain-style JSON gives them (hashes in display hex). */
export interface HeaderFields {
  readonly version: number;
  readonly previousblockhash?: string | null;
  readonly merkleroot: string;
  readonly time: number;
  /** Compact target as 8 hex digits, e.g. "207fffff". */
  readonly bits: string;
  readonly nonce: number;
}

/**
 * The 80-byte header rebuilt from JSON fields (`bits` as 8 hex digits, a missing previous hash
 * is the genesis block's zero hash). Callers MUST compare its hash with the claimed block hash.
 * @throws Error when a field is out of range or not hex.
 */
export function headerFromFields(f: HeaderFields): BlockHeader {
  if (!/^[0-9a-fA-F]{8}$/.test(f.bits))
    throw new Error(`bits must be 8 hex digits, got ${String(f.bits).slice(0, 20)}`);
  const u32 = (name: string, v: number) => {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new Error(`${name} is not a 32-bit unsigned integer`);
    return v;
  };
  if (!Number.isInteger(f.version) || f.version < -0x80000000 || f.version > 0xffffffff)
    throw new Error('version is not a 32-bit integer');
  const header: BlockHeader = {
    // Some services show the version unsigned; the header stores the same 4 bytes either way.
    version: f.version > 0x7fffffff ? f.version - 0x100000000 : f.version,
    prevHash: (f.previousblockhash ?? ZERO_HASH).toLowerCase(),
    merkleRoot: f.merkleroot.toLowerCase(),
    time: u32('time', f.time),
    bits: parseInt(f.bits, 16),
    nonce: u32('nonce', f.nonce),
  };
  serializeHeader(header); // throws on malformed hashes
  return header;
}
