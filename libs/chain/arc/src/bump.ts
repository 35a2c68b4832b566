import { MerklePath } from '@bsv/sdk';
import { DUPLICATE_NODE, checkInclusion, isHashHex, parseHeader, tscProof } from '@proofline/chain-domain';
import type { ChainHeader, HeadersSource, InclusionFailure, TscMerkleProof } from '@proofline/chain-domain';
import type { ArcProofStore } from './proof-store';

/** Why a BUMP was refused. Never stored; the confirmation pass asks again later. */
export type ProofFailureReason =
  'MALFORMED_BUMP' | 'TX_NOT_IN_BUMP' | 'HEADER_UNAVAILABLE' | 'NOT_ON_MAIN_CHAIN' | InclusionFailure;

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
): { ok: true; proof: TscMerkleProof; height: number; path?: MerklePath } | ProofFailure {
  const fail = (reason: ProofFailureReason, detail: string): ProofFailure => ({ ok: false, txId, reason, detail });
  // Hex decoding stops at the first pair that is not hex: all of it was hex iff nothing was cut.
  const bytes = Buffer.from(bumpHex, 'hex');
  if (bumpHex.length === 0 || bytes.length * 2 !== bumpHex.length)
    return fail('MALFORMED_BUMP', 'the merklePath is not hex');
  const plain = readPlainBump(bytes, txId);
  if (plain)
    return { ok: true, proof: tscProof(plain.index, txId, headerHex.toLowerCase(), plain.nodes), height: plain.height };
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
  const fail = (reason: ProofFailureReason, detail: string): ProofFailure => ({
    ok: false,
    txId: claim.txId,
    reason,
    detail,
  });
  if (!header) return fail('HEADER_UNAVAILABLE', `the headers source does not know block ${claim.blockHash}`);
  if (header.hash !== claim.blockHash)
    return fail('HEADER_HASH_MISMATCH', `asked for ${claim.blockHash}, got the header of ${header.hash}`);
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
  // A BUMP the sdk read (compound, or any shape but the plain one) is folded by the sdk too; a
  // plain one's leaves ARE the TSC nodes checkInclusion just folded to the header's root.
  if (converted.path) {
    let sdkRoot: string;
    try {
      sdkRoot = converted.path.computeRoot(claim.txId);
    } catch (e) {
      return fail('MALFORMED_BUMP', `the sdk cannot compute a root: ${(e as Error).message}`);
    }
    const merkleRoot = parseHeader(header.headerHex).merkleRoot;
    if (sdkRoot !== merkleRoot)
      return fail('ROOT_MISMATCH', `the BUMP computes root ${sdkRoot}, the header has ${merkleRoot}`);
  }
  return {
    ok: true,
    txId: claim.txId,
    blockHash: claim.blockHash,
    blockHeight: claim.blockHeight,
    headerHex: header.headerHex.toLowerCase(),
    proof: converted.proof,
  };
}

/**
 * Reads the BUMP of one transaction in its plain shape, the one ARC answers for a single txid
 * (and the devnet node writes): level 0 holds the transaction and its sibling (or only the
 * transaction in a one-transaction block), every higher level exactly the one sibling its path
 * needs; a duplicate flag stands for "*". Buffers only, no hashing: the sdk's `MerklePath`
 * computes the root twice in JS to construct itself, which was most of a worker's proof cost.
 * Answers null for anything else (compound BUMPs, extra leaves, trailing bytes, a malformed
 * varint), which then goes through the sdk as before.
 */
function readPlainBump(bytes: Buffer, txId: string): { height: number; index: number; nodes: string[] } | null {
  let at = 0;
  const varInt = (): number | null => {
    if (at >= bytes.length) return null;
    const first = bytes[at] as number;
    at += 1;
    if (first < 0xfd) return first;
    const size = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
    if (at + size > bytes.length) return null;
    const value =
      size === 2 ? bytes.readUInt16LE(at) : size === 4 ? bytes.readUInt32LE(at) : Number(bytes.readBigUInt64LE(at));
    at += size;
    return Number.isSafeInteger(value) ? value : null;
  };
  const leaf = (): { offset: number; hash: string | null } | null => {
    const offset = varInt();
    if (offset === null || at >= bytes.length) return null;
    const flags = bytes[at] as number;
    at += 1;
    if (flags & 1) return flags === 1 ? { offset, hash: null } : null;
    if (flags > 2 || at + 32 > bytes.length) return null;
    const hash = Buffer.from(bytes.subarray(at, at + 32))
      .reverse()
      .toString('hex');
    at += 32;
    return { offset, hash };
  };
  const height = varInt();
  if (height === null || at >= bytes.length) return null;
  const levels = bytes[at] as number;
  at += 1;
  if (levels < 1 || levels > 64) return null;
  const count0 = varInt();
  if (count0 !== 1 && count0 !== 2) return null;
  const first = leaf();
  const second = count0 === 2 ? leaf() : undefined;
  if (!first || second === null) return null;
  const self = first.hash === txId ? first : second?.hash === txId ? second : undefined;
  if (!self) return null;
  const index = self.offset;
  const nodes: string[] = [];
  if (count0 === 1) {
    if (levels !== 1) return null;
  } else {
    const sibling = self === first ? second : first;
    if (!sibling || sibling.offset !== (index ^ 1)) return null;
    nodes.push(sibling.hash ?? DUPLICATE_NODE);
  }
  for (let h = 1; h < levels; h++) {
    if (varInt() !== 1) return null;
    const node = leaf();
    if (!node || node.offset !== ((index >> h) ^ 1)) return null;
    nodes.push(node.hash ?? DUPLICATE_NODE);
  }
  return at === bytes.length && (levels === 1 || index >> levels === 0) ? { height, index, nodes } : null;
}

/** The little of a logger proving uses (pino's Logger fits). */
export interface TrackerLogger {
  warn(obj: object, msg: string): void;
}

/** What proving needs. */
export interface ProofDeps {
  readonly headers: HeadersSource;
  readonly store: ArcProofStore;
  readonly logger?: TrackerLogger;
}

export interface ProveReport {
  /** TxIds whose proof was verified and stored. */
  readonly proven: readonly string[];
  /** Proofs refused (never stored): logged; the tx stays waiting and is polled again. */
  readonly failed: readonly ProofFailure[];
  /** The distinct blocks the stored proofs are in. */
  readonly blocks: readonly { readonly hash: string; readonly height: number }[];
}

/**
 * Verifies MINED claims against headers (one header fetch per distinct block) and stores the
 * proofs that pass, in one MULTI. Headers-source faults leave the affected claims out as
 * `HEADER_UNAVAILABLE` failures (retried later); nothing unverified is ever stored.
 */
export async function proveMined(deps: ProofDeps, claims: readonly MinedClaim[]): Promise<ProveReport> {
  const headerOf = new Map<string, Promise<ChainHeader | null | Error>>();
  const verified: VerifiedProof[] = [];
  const failed: ProofFailure[] = [];
  for (const claim of claims) {
    let pending = headerOf.get(claim.blockHash);
    if (!pending) {
      pending = deps.headers
        .headerByHash(claim.blockHash)
        .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
      headerOf.set(claim.blockHash, pending);
    }
    const header = await pending;
    const outcome =
      header instanceof Error
        ? ({ ok: false, txId: claim.txId, reason: 'HEADER_UNAVAILABLE', detail: header.message } satisfies ProofFailure)
        : verifyBump(claim, header);
    if (outcome.ok) verified.push(outcome);
    else failed.push(outcome);
  }
  await deps.store.storeProofs(verified);
  for (const f of failed)
    deps.logger?.warn(
      { txId: f.txId, reason: f.reason, detail: f.detail },
      'ARC proof refused; the transaction stays waiting',
    );
  const blocks = new Map(verified.map((v) => [v.blockHash, v.blockHeight]));
  return {
    proven: verified.map((v) => v.txId),
    failed,
    blocks: [...blocks].map(([hash, height]) => ({ hash, height })),
  };
}
