import { randomBytes } from 'node:crypto';
import { merkleBranches, mineHeader, tscProof } from '@proofline/chain-domain';
import type { VerifiedProof } from '../bump';

/**
 * A block of `n` random txIds (or the ones given) under a mined regtest header, with every
 * transaction's proof in the shape `storeProofs` takes: for specs and benchmarks of the proof
 * store, which need many real, verifiable proofs without a chain. Pure: no I/O.
 */
export function syntheticBlock(
  n: number,
  height: number,
  txIds: readonly string[] = Array.from({ length: n }, () => randomBytes(32).toString('hex')),
): { txIds: string[]; hash: string; headerHex: string; proofs: VerifiedProof[] } {
  const { root, branches } = merkleBranches(txIds);
  const mined = mineHeader({
    version: 0x20000000,
    prevHash: randomBytes(32).toString('hex'),
    merkleRoot: root,
    time: 1_790_000_000 + height,
    bits: 0x207fffff,
    nonce: 0,
  });
  const proofs: VerifiedProof[] = txIds.map((txId, i) => ({
    ok: true,
    txId,
    blockHash: mined.hash,
    blockHeight: height,
    headerHex: mined.hex,
    proof: tscProof(i, txId, mined.hex, branches[i] ?? []),
  }));
  return { txIds: [...txIds], hash: mined.hash, headerHex: mined.hex, proofs };
}
