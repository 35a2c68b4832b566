import type { TscMerkleProof } from './ports';
import { fromDisplayHex, isHashHex, sha256d, toDisplayHex } from './hash';
import { HEADER_BYTES, headerFacts, parseHeader } from './block-header';

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
