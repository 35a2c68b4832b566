// The black-box check's own pieces: its TSC -> MerklePath conversion on real and built blocks
// (block 100000; odd counts, where "*" marks a duplicated node), and the assertions refusing what
// they must. The check against a running service: apps/launcher/src/blackbox.spec.ts.
import { createHash } from 'node:crypto';
import { merkleBranches, tscProof } from '@proofline/chain-domain';
import { CheckFailed, expectProblem } from './http';
import type { Answer } from './http';
import { merklePathOf } from './proof';

/** Every tx's TSC proof (the header is not read here) and the block's merkle root. */
function proofsOf(txIds: string[]) {
  const { root, branches } = merkleBranches(txIds);
  return { root, proofs: txIds.map((txId, i) => tscProof(i, txId, '00'.repeat(80), branches[i] as string[])) };
}

describe('blackbox: TSC proof -> MerklePath', () => {
  it('computes block 100000 merkle root from every proof of its real txIds', () => {
    const txIds = [
      '8c14f0db3df150123e6f3dbbf30f8b955a8249b62ac1d1ff16284aefa3d06d87',
      'fff2525b8931402dd09222c50775608f75787bd2b87e56995a7bdd30f79702c4',
      '6359f0868171b1d194cbee1af2f16ea598ae8fad666d9b012c8ed2b79a236ec4',
      'e9a66845e05d5abc0ad04ec80f774a7e585c6e8db975962d069a522137b80c1d',
    ];
    const { root, proofs } = proofsOf(txIds);
    expect(root).toBe('f3e94742aca4b5ef85488dc37c06c3282295ffec960994b2c0d5ac2a25a95766');
    proofs.forEach((p, i) =>
      expect(merklePathOf(p, 100000).computeRoot(txIds[i])).toBe(
        'f3e94742aca4b5ef85488dc37c06c3282295ffec960994b2c0d5ac2a25a95766',
      ),
    );
  });

  it.each([1, 2, 3, 5, 7, 13])('every proof of a %i-tx block gives the root; a changed node does not', (n) => {
    const txIds = Array.from({ length: n }, (_, i) => createHash('sha256').update(`bb-${n}-${i}`).digest('hex'));
    const { root, proofs } = proofsOf(txIds);
    for (const [i, proof] of proofs.entries()) {
      expect(merklePathOf(proof, 7).computeRoot(txIds[i])).toBe(root);
      const real = proof.nodes.findIndex((node) => node !== '*');
      if (real < 0) continue;
      const nodes = [...proof.nodes];
      nodes[real] = 'ab'.repeat(32);
      expect(merklePathOf({ ...proof, nodes }, 7).computeRoot(txIds[i])).not.toBe(root);
    }
  });
});

describe('blackbox: expectProblem', () => {
  const answer = (status: number, type: string, body: unknown): Answer => ({
    status,
    headers: new Headers({ 'content-type': type }),
    bytes: Buffer.from(JSON.stringify(body)),
    json: body,
  });
  const problem = { type: 'https://x/p', title: 'Bad Request', status: 400, detail: 'd', errorCode: 'X' };

  it('accepts a problem with that status and errorCode and returns its detail', () => {
    expect(expectProblem(answer(400, 'application/problem+json; charset=utf-8', problem), 400, 'X', 'w')).toBe('d');
  });

  it.each([
    ['another status', answer(404, 'application/problem+json', { ...problem, status: 404 })],
    ['plain JSON', answer(400, 'application/json', problem)],
    ['another errorCode', answer(400, 'application/problem+json', { ...problem, errorCode: 'Y' })],
    ['a body status that differs', answer(400, 'application/problem+json', { ...problem, status: 500 })],
    ['no detail', answer(400, 'application/problem+json', { ...problem, detail: undefined })],
  ])('refuses %s', (_name, a) => {
    expect(() => expectProblem(a, 400, 'X', 'w')).toThrow(CheckFailed);
  });
});
