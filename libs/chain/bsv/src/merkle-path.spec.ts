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
    const txIds = [
      '8c14f0db3df150123e6f3dbbf30f8b955a8249b62ac1d1ff16284aefa3d06d87',
      'fff2525b8931402dd09222c50775608f75787bd2b87e56995a7bdd30f79702c4',
      '6359f0868171b1d194cbee1af2f16ea598ae8fad666d9b012c8ed2b79a236ec4',
      'e9a66845e05d5abc0ad04ec80f774a7e585c6e8db975962d069a522137b80c1d',
    ];
    const header = serializeHeader({
      version: 1,
      prevHash: '000000000002d01c1fccc21636b607dfd930d31d01c3a62104612a1719011250',
      merkleRoot: 'f3e94742aca4b5ef85488dc37c06c3282295ffec960994b2c0d5ac2a25a95766',
      time: 1293623863,
      bits: 0x1b04864c,
      nonce: 274148111,
    }).toString('hex');
    buildBranchProofs(txIds, header).forEach((p, i) => {
      expect(tscToMerklePath(p, 100000).computeRoot(txIds[i])).toBe(
        'f3e94742aca4b5ef85488dc37c06c3282295ffec960994b2c0d5ac2a25a95766',
      );
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
