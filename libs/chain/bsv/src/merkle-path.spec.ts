import { createHash } from 'node:crypto';
import { MerklePath } from '@bsv/sdk';
import {
  REGTEST_BITS,
  buildBranchProofs,
  merkleRoot,
  parseHeader,
  serializeHeader,
  verifyTscProof,
} from '@proofline/chain-domain';
import { MAINNET_BLOCK_100000 } from '@proofline/shared-testing';
import { tscToBumpHex, tscToMerklePath } from './merkle-path';

const ids = (n: number) =>
  Array.from({ length: n }, (_, i) => createHash('sha256').update(`bump-${n}-${i}`).digest('hex'));

/** A regtest block of `txIds` (header not mined: only its Merkle root matters here), its root and every tx's proof. */
function blockOf(txIds: string[]) {
  const header = serializeHeader({
    version: 0x20000000,
    prevHash: '0'.repeat(64),
    merkleRoot: merkleRoot(txIds),
    time: 1_700_000_000,
    bits: REGTEST_BITS,
    nonce: 0,
  }).toString('hex');
  return { root: parseHeader(header).merkleRoot, proofs: buildBranchProofs(txIds, header) };
}

describe('TSC proof -> MerklePath (BUMP)', () => {
  it('agrees with block 100000 (real txIds, real merkle root)', () => {
    const { txIds, header: fields, merkleRoot: root } = MAINNET_BLOCK_100000;
    const header = serializeHeader(fields).toString('hex');
    buildBranchProofs(txIds, header).forEach((p, i) => {
      expect(tscToMerklePath(p, 100000).computeRoot(txIds[i])).toBe(root);
    });
  });

  it.each([1, 2, 3, 5, 8, 13])('every proof of a %i-tx block is accepted by the sdk and by our verifier', (n) => {
    const txIds = ids(n);
    const { root, proofs } = blockOf(txIds);
    for (const [i, proof] of proofs.entries()) {
      expect(verifyTscProof(proof, txIds[i] as string).valid).toBe(true);
      const path = tscToMerklePath(proof, 42);
      expect(path.computeRoot(txIds[i])).toBe(root);
      // And through the BUMP binary form.
      expect(MerklePath.fromHex(path.toHex()).computeRoot(txIds[i])).toBe(root);
    }
  });

  it.each([1, 2, 3, 7, 64, 255, 300])(
    "tscToBumpHex writes the sdk's bytes for every proof of a %i-tx block (heights up to 2^32)",
    (n) => {
      const txIds = ids(n);
      const { root, proofs } = blockOf(txIds);
      for (const [i, proof] of proofs.entries()) {
        for (const height of [0, 252, 253, 70_000, 4_294_967_296]) {
          const hex = tscToBumpHex(proof, height);
          expect(hex).toBe(tscToMerklePath(proof, height).toHex());
          expect(MerklePath.fromHex(hex).computeRoot(txIds[i])).toBe(root);
        }
      }
    },
  );
});
