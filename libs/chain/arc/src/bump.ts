import { MerklePath } from '@bsv/sdk';
import { DUPLICATE_NODE, checkInclusion, isHashHex, parseHeader, tscProof } from '@proofline/chain-domain';
import type { ChainHeader, InclusionFailure, TscMerkleProof } from '@proofline/chain-domain';

/** Why a BUMP was refused. Never stored; the tracker asks again later. */
export type ProofFailureReason = 'MALFORMED_BUMP' | 'TX_NOT_IN_BUMP' | 'HEADER_UNAVAILABLE' | 'NOT_ON_MAIN_CHAIN' | InclusionFailure;

export interface ProofFailure {
  readonly ok: false;
  readonly txId: string;
  readonly reason: ProofFailureReason;
  readonly detail: string;
}

/** A proof that passed every check, in the TSC form plus what the store keeps. */
export interface VerifiedProof {
  readonly ok: true;
  readonly txId: string;
  readonly blockHash: string;
  readonly blockHeight: number;
  readonly headerHex: string;
  readonly proof: TscMerkleProof;
}

/**
 * Converts a BRC-74 BUMP into the TSC branch proof of `txId` against `headerHex`: the leaf's
 * offset is the index, and each level's sibling (`(index >> h) ^ 1`, computed from lower levels
 * when a compound BUMP omits it) is a node; a duplicate marker, or a missing last sibling of an
 * odd level in a one-level compound path, is `"*"`. A one-transaction block has no nodes.
 * Nothing here checks the result against a header: {@link verifyBump} does.
 */
export function bumpToTsc(
  bumpHex: string,
  txId: string,
  headerHex: string,
): { ok: true; proof: TscMerkleProof; height: number; path: MerklePath } | ProofFailure {
  const fail = (reason: ProofFailureReason, detail: string): ProofFailure => ({ ok: false, txId, reason, detail });
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(bumpHex)) return fail('MALFORMED_BUMP', 'the merklePath is not hex');
  let mp: MerklePath;
  try {
    mp = MerklePath.fromHex(bumpHex);
  } catch (e) {
    return fail('MALFORMED_BUMP', `the sdk cannot read the BUMP: ${(e as Error).message}`);
  }
  const level0 = mp.path[0] ?? [];
  const leaf = level0.find((l) => l.hash === txId);
  if (!leaf) return fail('TX_NOT_IN_BUMP', `the BUMP has no leaf for ${txId}`);
  const index = leaf.offset;
  const nodes: string[] = [];
  if (!(mp.path.length === 1 && level0.length === 1)) {
    const maxOffset = level0.reduce((m, l) => Math.max(m, l.offset), 0);
    const treeHeight = Math.max(mp.path.length, 32 - Math.clz32(maxOffset));
    for (let h = 0; h < treeHeight; h++) {
      let sibling;
      try {
        sibling = mp.findOrComputeLeaf(h, (index >> h) ^ 1);
      } catch (e) {
        return fail('MALFORMED_BUMP', `level ${h}: ${(e as Error).message}`);
      }
      if (sibling?.duplicate === true) nodes.push(DUPLICATE_NODE);
      else if (sibling?.hash && isHashHex(sibling.hash)) nodes.push(sibling.hash);
      else if (!sibling && mp.path.length === 1 && index >> h === maxOffset >> h) nodes.push(DUPLICATE_NODE);
      else return fail('MALFORMED_BUMP', `level ${h} has no sibling for offset ${index >> h}`);
    }
  }
  return { ok: true, proof: tscProof(index, txId, headerHex.toLowerCase(), nodes), height: mp.blockHeight, path: mp };
}

/** A MINED answer from ARC (or its callback), not yet trusted. */
export interface MinedClaim {
  readonly txId: string;
  readonly blockHash: string;
  readonly blockHeight: number;
  readonly merklePath: string;
}

/**
 * Checks a MINED claim against a header from an independent headers source: the block is on the
 * main chain (confirmations ≥ 1) at the claimed height, its header hashes to the claimed hash and
 * meets its target, the BUMP's own height matches, and both the sdk (`computeRoot`) and the TSC
 * fold of the converted nodes give the header's Merkle root. Pure; every failure is data.
 */
export function verifyBump(claim: MinedClaim, header: ChainHeader | null): VerifiedProof | ProofFailure {
  const fail = (reason: ProofFailureReason, detail: string): ProofFailure => ({ ok: false, txId: claim.txId, reason, detail });
  if (!header) return fail('HEADER_UNAVAILABLE', `the headers source does not know block ${claim.blockHash}`);
  if (header.hash !== claim.blockHash) return fail('HEADER_HASH_MISMATCH', `asked for ${claim.blockHash}, got the header of ${header.hash}`);
  if (header.confirmations < 1) return fail('NOT_ON_MAIN_CHAIN', `block ${claim.blockHash} is not on the main chain`);
  const converted = bumpToTsc(claim.merklePath, claim.txId, header.headerHex);
  if (!converted.ok) return converted;
  const verdict = checkInclusion({
    txId: claim.txId,
    blockHash: claim.blockHash,
    blockHeight: claim.blockHeight,
    proofHeight: converted.height,
    proof: converted.proof,
    header: { hex: header.headerHex, height: header.height },
  });
  if (!verdict.valid) return fail(verdict.reason, verdict.detail);
  let sdkRoot: string;
  try {
    sdkRoot = converted.path.computeRoot(claim.txId);
  } catch (e) {
    return fail('MALFORMED_BUMP', `the sdk cannot compute a root: ${(e as Error).message}`);
  }
  const merkleRoot = parseHeader(header.headerHex).merkleRoot;
  if (sdkRoot !== merkleRoot) return fail('ROOT_MISMATCH', `the BUMP computes root ${sdkRoot}, the header has ${merkleRoot}`);
  return { ok: true, txId: claim.txId, blockHash: claim.blockHash, blockHeight: claim.blockHeight, headerHex: header.headerHex.toLowerCase(), proof: converted.proof };
}
