/**
 * Depth of a block: tip height − block height + 1, never below 1.
 *
 * The stored tip only moves up to a block after that block's proofs are stored (a callback or a
 * confirmation pass stores them, then raises the tip), so a reader in between sees a proof above
 * the tip. A proof verified against the headers source shows the best chain reaches at least its
 * block, so such a block counts as the tip (1), never as 0 or a negative depth.
 */
export function confirmedBlocks(tipHeight: number, blockHeight: number): number {
  return Math.max(1, tipHeight - blockHeight + 1);
}
