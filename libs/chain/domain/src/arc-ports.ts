/**
 * Ports of the ARC publication path that are not in `ports.ts`: a block headers source (the
 * devnet, a WhatsOnChain-compatible service, later a Block Headers Service) that proofs are
 * checked against. Kept in its own file so edits to `ports.ts` elsewhere merge cleanly.
 */

/** A block header as a headers source reports it, checked to hash to `hash`. */
export interface ChainHeader {
  /** Block hash, display hex. */
  readonly hash: string;
  readonly height: number;
  /** Blocks on top of it, itself included; -1 when the block is no longer on the main chain. */
  readonly confirmations: number;
  /** The 80-byte header, hex. */
  readonly headerHex: string;
}

/** The best chain's tip as a headers source reports it. */
export interface ChainTipInfo {
  readonly height: number;
  readonly hash: string;
}

/** Where proofs get their headers from. Implementations MUST check that every header hashes to its hash. */
export interface HeadersSource {
  tip(): Promise<ChainTipInfo>;
  /** The header of `hash`, or null when the source does not know the block. */
  headerByHash(hash: string): Promise<ChainHeader | null>;
}
