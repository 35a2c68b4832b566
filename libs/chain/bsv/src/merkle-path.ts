import { MerklePath } from '@bsv/sdk';
import { DUPLICATE_NODE, varInt } from '@proofline/chain-domain';
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

/**
 * The BUMP (BRC-74) of a TSC branch proof, hex: the bytes `tscToMerklePath(proof, blockHeight).toHex()`
 * gives, written with Buffers and no root computation (the sdk's constructor computes the root
 * twice in JS hashing to validate its input; the devnet node answered every `GET /v1/tx` of a
 * mined transaction with it, ~12 % of the node's CPU under load). For proofs that already verify;
 * `merkle-path.spec.ts` holds the two encodings equal.
 */
export function tscToBumpHex(proof: TscMerkleProof, blockHeight: number): string {
  const nodes = proof.nodes;
  const levels = Math.max(1, nodes.length);
  const parts: Buffer[] = [varInt(blockHeight), Buffer.from([levels])];
  const leaf = (offset: number, flags: number, hash?: string) => {
    parts.push(varInt(offset), Buffer.from([flags]));
    if (hash !== undefined) parts.push(Buffer.from(hash, 'hex').reverse());
  };
  const sibling = (h: number) => {
    const node = nodes[h] as string;
    const offset = (proof.index >> h) ^ 1;
    if (node === DUPLICATE_NODE) leaf(offset, 1);
    else leaf(offset, 0, node);
  };
  // level 0: the transaction itself (flag 2: a client txid), then its sibling
  parts.push(varInt(nodes.length === 0 ? 1 : 2));
  leaf(proof.index, 2, proof.txOrId);
  if (nodes.length > 0) sibling(0);
  for (let h = 1; h < nodes.length; h++) {
    parts.push(varInt(1));
    sibling(h);
  }
  return Buffer.concat(parts).toString('hex');
}
