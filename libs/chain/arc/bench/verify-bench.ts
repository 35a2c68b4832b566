/**
 * `npx tsx libs/chain/arc/bench/verify-bench.ts`: CPU per proof of verifying a block's MINED
 * claims the way the API's callback route and the confirmation pass do (`verifyBump`: header
 * hash, target, heights, the TSC fold to the header's root). Each of five rounds verifies a new
 * block of BENCH_BLOCK_TXS (1,100) random txIds, every one claimed once with its plain BUMP (the
 * shape the devnet node and ARC send); best and median µs per proof.
 */
import { randomBytes } from 'node:crypto';
import { REGTEST_BITS, buildBranchProofs, merkleRoot, mineHeader } from '@proofline/chain-domain';
import { tscToBumpHex } from '@proofline/chain-bsv';
import { verifyBump } from '../src/bump';
import type { MinedClaim } from '../src/bump';

const n = Number(process.env['BENCH_BLOCK_TXS'] ?? 1100);
const height = 812;

/** A fresh block of `n` random txIds, each claimed with its plain BUMP (each round verifies a new block, as a verifier does). */
function block() {
  const txIds = Array.from({ length: n }, () => randomBytes(32).toString('hex'));
  const mined = mineHeader({
    version: 1,
    prevHash: randomBytes(32).toString('hex'),
    merkleRoot: merkleRoot(txIds),
    time: 1_700_000_000,
    bits: REGTEST_BITS,
    nonce: 0,
  });
  const proofs = buildBranchProofs(txIds, mined.hex);
  const claims: MinedClaim[] = txIds.map((txId, i) => ({
    txId,
    blockHash: mined.hash,
    blockHeight: height,
    merklePath: tscToBumpHex(proofs[i]!, height),
  }));
  return { claims, header: { hash: mined.hash, height, headerHex: mined.hex, confirmations: 1 } };
}

const rounds: number[] = [];
for (let r = 0; r < 5; r++) {
  const { claims, header } = block();
  const t = process.cpuUsage();
  for (const claim of claims) {
    const outcome = verifyBump(claim, header);
    if (!outcome.ok) throw new Error(`${claim.txId}: ${outcome.reason} ${outcome.detail}`);
  }
  const used = process.cpuUsage(t);
  rounds.push((used.user + used.system) / n);
}
rounds.sort((a, b) => a - b);
process.stdout.write(
  `verifyBump, a new block of ${n} txs per round, every tx claimed once: best ${rounds[0]!.toFixed(1)} µs, median ${rounds[2]!.toFixed(1)} µs of CPU a proof (5 rounds)\n`,
);
