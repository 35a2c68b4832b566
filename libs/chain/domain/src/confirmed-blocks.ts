/**
 * Depth of a block: tip height − block height + 1, never below 1.
 *
 * The stored tip is what the headers source reported at the last confirmation pass, while proofs
 * also arrive by ARC callback between passes: a block just proven can stand above that tip (by
 * several blocks when blocks come fast). A proof verified against the headers source shows the
 * best chain reaches at least its block, so such a block counts as the tip (1), never as 0 or a
 * negative depth.
 */
export function confirmedBlocks(tipHeight: number, blockHeight: number): number {
  return Math.max(1, tipHeight - blockHeight + 1);
}
