import { hash } from 'node:crypto';
import type { TscMerkleProof } from './ports';

/*
 * A block as the chain adapters check it: the hashes that name blocks and transactions (display
 * hex), the 80-byte header and its proof of work, the Merkle tree of its txIds and the TSC proofs
 * of inclusion checked against a header, and a block's depth below the tip.
 */

/**
 * SHA-256 of `data`. One-shot `crypto.hash`, not `createHash`: no Hash object per call. Each of
 * those carries a native handle the garbage collector must finalise, and a record is hashed ~40
 * times on its way (its txId, the sighash, the devnet's checks, every level of its proof):
 * verifying a proof cost ~70 µs with Hash objects, ~48 µs without.
 */
export function sha256(data: Uint8Array): Buffer {
  return hash('sha256', data, 'buffer');
}

/** Bitcoin's double SHA-256 (txIds, block hashes, Merkle nodes), in internal byte order. */
export function sha256d(data: Uint8Array): Buffer {
  return sha256(sha256(data));
}

const HASH_HEX = /^[0-9a-f]{64}$/;

/** True for a 32-byte hash as 64 lowercase hex characters. */
export function isHashHex(value: string): boolean {
  return HASH_HEX.test(value);
}

/**
 * Display hex (reversed, as txIds and block hashes are shown) to internal bytes.
 * @throws Error when `hex` is not 64 lowercase hex characters.
 */
export function fromDisplayHex(hex: string): Buffer {
  if (!isHashHex(hex)) throw new Error(`not a 32-byte hash in hex: ${hex.slice(0, 80)}`);
  return Buffer.from(hex, 'hex').reverse();
}

/** Internal bytes to display hex (reversed). */
export function toDisplayHex(internal: Uint8Array): string {
  return Buffer.from(internal).reverse().toString('hex');
}

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

/** TSC marker for a sibling that is the duplicate of the running hash (odd level). */
export const DUPLICATE_NODE = '*';

function parent(left: Buffer, right: Buffer): Buffer {
  return sha256d(Buffer.concat([left, right]));
}

/** Parents a process remembers for proof folds (~400 B each, a block of ~4,000 of ours); all forgotten at once when full. */
const FOLDS_KEPT = 4096;
const folds = new Map<string, string>();

/**
 * The parent of two Merkle nodes, all three in display hex (as TSC proofs carry them), remembered
 * by the children's hex. The proofs of one block share their upper nodes: a block of 1,000 of
 * ours folded ~11,000 parents for ~1,000 distinct ones, and a remembered one costs a lookup, with
 * no hex decoded, reversed or hashed. A pure function remembered, so no verdict changes. Both
 * children MUST be hash hex (64 lowercase characters): the caller checks a node before its first
 * fold, and a key is only ever stored for checked children.
 */
function foldParent(left: string, right: string): string {
  const key = left + right;
  let node = folds.get(key);
  if (node === undefined) {
    node = toDisplayHex(parent(fromDisplayHex(left), fromDisplayHex(right)));
    if (folds.size >= FOLDS_KEPT) folds.clear();
    folds.set(key, node);
  }
  return node;
}

/**
 * Every level of the Bitcoin Merkle tree over `txIds` (display hex), leaves first, root last;
 * hashes in internal byte order. An odd level pairs its last hash with itself.
 * @throws Error on an empty list or a malformed txId.
 */
export function merkleLevels(txIds: readonly string[]): Buffer[][] {
  if (txIds.length === 0) throw new Error('a Merkle tree needs at least one txId');
  const levels: Buffer[][] = [txIds.map(fromDisplayHex)];
  for (let level = levels[0] as Buffer[]; level.length > 1;) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i] as Buffer;
      next.push(parent(left, level[i + 1] ?? left));
    }
    levels.push(next);
    level = next;
  }
  return levels;
}

/** The Bitcoin Merkle root of `txIds` (display hex in, display hex out). */
export function merkleRoot(txIds: readonly string[]): string {
  const levels = merkleLevels(txIds);
  return toDisplayHex((levels[levels.length - 1] as Buffer[])[0] as Buffer);
}

/**
 * The TSC branch nodes of every leaf, built in one pass over the tree levels: `branches[i]`
 * lists leaf i's siblings from the leaf level up (display hex, `"*"` for a duplicate).
 */
export function merkleBranches(txIds: readonly string[]): { root: string; branches: string[][] } {
  const levels = merkleLevels(txIds);
  const branches: string[][] = txIds.map(() => []);
  for (let h = 0; h < levels.length - 1; h++) {
    const level = levels[h] as Buffer[];
    // Display hex of each node at this level, computed once and shared by every leaf under it.
    const shown = new Map<number, string>();
    for (let i = 0; i < branches.length; i++) {
      const sibling = (i >> h) ^ 1;
      let node: string;
      if (sibling >= level.length) node = DUPLICATE_NODE;
      else {
        node = shown.get(sibling) ?? toDisplayHex(level[sibling] as Buffer);
        shown.set(sibling, node);
      }
      (branches[i] as string[]).push(node);
    }
  }
  return { root: toDisplayHex((levels[levels.length - 1] as Buffer[])[0] as Buffer), branches };
}

/**
 * All TSC Merkle proofs of a block (one per txId, in block order) against its 80-byte header.
 * @throws Error when the header's Merkle root is not the root of `txIds`.
 */
export function buildBranchProofs(txIds: readonly string[], headerHex: string): TscMerkleProof[] {
  const { root, branches } = merkleBranches(txIds);
  const header = parseHeader(headerHex);
  if (header.merkleRoot !== root)
    throw new Error(`header merkle root ${header.merkleRoot} is not the root ${root} of the txIds`);
  return txIds.map((txId, index) => tscProof(index, txId, headerHex, branches[index] as string[]));
}

/** Assembles the TSC JSON form. */
export function tscProof(index: number, txId: string, headerHex: string, nodes: readonly string[]): TscMerkleProof {
  return {
    index,
    txOrId: txId,
    target: headerHex,
    nodes: [...nodes],
    targetType: 'header',
    proofType: 'branch',
    composite: false,
  };
}

export type ProofVerdict =
  | { readonly valid: true; readonly root: string }
  | { readonly valid: false; readonly reason: string; readonly root?: string };

/**
 * Verifies a TSC branch proof of `txId`: folds the nodes up from the leaf and compares the result
 * with the Merkle root in the target header. Expected failures are data, never thrown.
 */
export function verifyTscProof(proof: TscMerkleProof, txId: string): ProofVerdict {
  if (proof.targetType !== 'header' || proof.proofType !== 'branch' || proof.composite !== false) {
    return { valid: false, reason: 'only header-targeted, non-composite branch proofs are supported' };
  }
  if (proof.txOrId !== txId) return { valid: false, reason: 'txOrId is not the txId' };
  if (!Number.isSafeInteger(proof.index) || proof.index < 0) return { valid: false, reason: 'bad index' };
  // The fold runs on display hex (foldParent): the running hash is always hash hex, from the
  // txId checked here and then from foldParent; each node is checked as it is met.
  let running: string;
  let header;
  try {
    fromDisplayHex(txId);
    running = txId;
    header = headerFacts(proof.target).header;
  } catch (e) {
    return { valid: false, reason: (e as Error).message };
  }
  let index = proof.index;
  for (const node of proof.nodes) {
    const right = (index & 1) === 1;
    if (node === DUPLICATE_NODE) {
      // Only a left node at the end of an odd level is paired with itself.
      if (right) return { valid: false, reason: 'duplicate node on the right-hand side' };
      running = foldParent(running, running);
    } else {
      if (!isHashHex(node)) return { valid: false, reason: 'malformed node' };
      // A left sibling equal to the running hash would be the CVE-2012-2459 duplicate trick.
      if (right && node === running) return { valid: false, reason: 'left sibling duplicates the running hash' };
      running = right ? foldParent(node, running) : foldParent(running, node);
    }
    index = Math.floor(index / 2);
  }
  if (index !== 0) return { valid: false, reason: 'index is outside the tree the nodes describe' };
  const root = running;
  return root === header.merkleRoot
    ? { valid: true, root }
    : { valid: false, reason: 'computed root differs from the header', root };
}

/** Why a claimed inclusion was refused. */
export type InclusionFailure =
  | 'MALFORMED_HEADER'
  | 'HEADER_HASH_MISMATCH'
  | 'HEADER_ABOVE_TARGET'
  | 'HEIGHT_MISMATCH'
  | 'TARGET_MISMATCH'
  | 'ROOT_MISMATCH';

export type InclusionVerdict =
  { readonly valid: true } | { readonly valid: false; readonly reason: InclusionFailure; readonly detail: string };

/** What a chain service claims about a transaction, and the header it is checked against. */
export interface InclusionClaim {
  readonly txId: string;
  /** The block the service names (display hex). */
  readonly blockHash: string;
  /** The height the service names. */
  readonly blockHeight: number;
  /** The height written in the proof itself (a BUMP carries one). */
  readonly proofHeight: number;
  readonly proof: TscMerkleProof;
  /** The header from an independent headers source, and the height that source gives it. */
  readonly header: { readonly hex: string; readonly height: number };
}

/**
 * Checks a claimed inclusion before anything stores it: the header hashes to `blockHash`, meets
 * its own proof-of-work target, sits at the claimed height (by the headers source and by the
 * proof), the proof targets exactly that header, and folding the proof's nodes from the txId
 * gives the header's Merkle root. Pure; failures are data.
 */
export function checkInclusion(claim: InclusionClaim): InclusionVerdict {
  const fail = (reason: InclusionFailure, detail: string): InclusionVerdict => ({ valid: false, reason, detail });
  const hex = claim.header.hex.toLowerCase();
  let facts;
  try {
    facts = headerFacts(hex);
  } catch (e) {
    return fail('MALFORMED_HEADER', (e as Error).message);
  }
  const { header, hash } = facts;
  if (hex.length !== HEADER_BYTES * 2) return fail('MALFORMED_HEADER', 'header is not 80 bytes');
  if (hash !== claim.blockHash) return fail('HEADER_HASH_MISMATCH', `header hashes to ${hash}, not ${claim.blockHash}`);
  if (!facts.meetsTarget)
    return fail('HEADER_ABOVE_TARGET', `header ${hash} does not meet its target (bits ${header.bits.toString(16)})`);
  if (claim.header.height !== claim.blockHeight)
    return fail('HEIGHT_MISMATCH', `block ${hash} is at height ${claim.header.height}, not ${claim.blockHeight}`);
  if (claim.proofHeight !== claim.blockHeight)
    return fail('HEIGHT_MISMATCH', `the proof is for height ${claim.proofHeight}, not ${claim.blockHeight}`);
  if (claim.proof.target.toLowerCase() !== hex)
    return fail('TARGET_MISMATCH', 'the proof does not target the block header');
  const verdict = verifyTscProof(claim.proof, claim.txId);
  if (!verdict.valid)
    return fail(
      'ROOT_MISMATCH',
      `${verdict.reason}${verdict.root ? ` (computed ${verdict.root}, header has ${header.merkleRoot})` : ''}`,
    );
  return { valid: true };
}

/**
 * Depth of a block: tip height − block height + 1, never below 1.
 *
 * The stored tip only moves up to a block after that block's proofs are stored (a callback or a
 * confirmation pass stores them, then raises the tip), so a reader in between sees a proof above
 * the tip. A proof verified against the headers source shows the best chain reaches at least its
 * block, so such a block counts as the tip (1), never as 0 or a negative depth.
 */
export function confirmedBlocks(tipHeight: number, blockHeight: number): number {
  return Math.max(1, tipHeight - blockHeight + 1);
}
