import type { TscMerkleProof } from './ports';
import { HEADER_BYTES, headerFacts } from './block-header';
import { verifyTscProof } from './merkle';

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
