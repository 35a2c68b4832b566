import { MerklePath } from '@bsv/sdk';
import { DUPLICATE_NODE } from '@proofline/chain-domain';
import type { TscMerkleProof } from '@proofline/chain-domain';

type Leaf = { offset: number; hash?: string; txid?: boolean; duplicate?: boolean };

/**
 * Converts a TSC branch proof into the sdk's MerklePath (BUMP, BRC-74) for `blockHeight`, so
 * BUMP/BEEF consumers (and `MerklePath.computeRoot`) can check it independently.
 * @throws Error when the sdk rejects the resulting path.
 */
export function tscToMerklePath(proof: TscMerkleProof, blockHeight: number): MerklePath {
  const leaf = (h: number, node: string): Leaf => {
    const offset = (proof.index >> h) ^ 1;
    return node === DUPLICATE_NODE ? { offset, duplicate: true } : { offset, hash: node };
  };
  const path: Leaf[][] = proof.nodes.map((node, h) => [leaf(h, node)]);
  const self: Leaf = { offset: proof.index, hash: proof.txOrId, txid: true };
  if (path.length === 0) path.push([self]);
  else (path[0] as Leaf[]).unshift(self);
  return new MerklePath(blockHeight, path);
}
