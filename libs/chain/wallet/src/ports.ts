import type { BroadcastVerdict } from '@proofline/chain-domain';

/**
 * The ports the wallet codes against. They mirror the interfaces being built on other branches
 * (the transaction builder in @proofline/chain-bsv, the ARC client), so the wallet compiles and
 * is tested today; the composition root adapts the real implementations to them.
 */

/** An unspent P2PKH output paying the deployment's funding key (`deriveChainKeys(seed).funding`). */
export interface FundingUtxo {
  /** Display-order (reversed) transaction id, 64 lowercase hex characters. */
  readonly txId: string;
  readonly vout: number;
  readonly satoshis: number;
}

/** A split transaction: `count` outputs of `satoshisEach` plus change, all to the funding key. */
export interface BuiltSplit {
  readonly txId: string;
  readonly rawHex: string;
  /** Extended Format (BIP-239) hex: what ARC validates without fetching parents. */
  readonly efHex: string;
  readonly outputs: readonly FundingUtxo[];
  readonly change: FundingUtxo | null;
  readonly fee: number;
}

export interface SplitRequest {
  readonly inputs: readonly FundingUtxo[];
  readonly count: number;
  readonly satoshisEach: number;
}

/**
 * Builds and signs a split transaction (on bsv-builder: `buildSplitTransaction` of
 * @proofline/chain-bsv). MUST throw an error named `InsufficientFundingError` when the inputs
 * cannot pay `count × satoshisEach` plus the fee.
 */
export interface SplitBuilder {
  buildSplitTransaction(request: SplitRequest): BuiltSplit;
}

/**
 * Submits one transaction to ARC (`arcSubmitPort`: its Extended Format bytes) and answers ARC's
 * verdict. MUST throw for an ambiguous outcome (timeout, network error, 5xx, 429): the
 * transaction may be out.
 */
export type SubmitPort = (tx: {
  readonly txId: string;
  readonly rawHex: string;
  readonly efHex: string;
}) => Promise<BroadcastVerdict>;

/**
 * Reads a transaction's status from ARC (`GET /v1/tx/{txid}`; `ArcClient.status` fits): the
 * follow-up of a split ARC answered below SEEN_ON_NETWORK. `not-found`: ARC does not know it
 * (send the same bytes again). MUST throw for an ambiguous outcome (timeout, 5xx).
 */
export type StatusPort = (
  txId: string,
) => Promise<BroadcastVerdict | { readonly kind: 'not-found'; readonly txId: string }>;

/** A coinbase transaction as a funding source serves it. */
export interface CoinbaseTx {
  readonly height: number;
  readonly blockHash: string;
  /** Raw transaction hex; the scanner recomputes its txId and reads its outputs itself. */
  readonly hex: string;
}

/** Where the funding scan finds coinbases paying the funding key (the devnet's HTTP API). */
export interface CoinbaseSource {
  /** Height of the chain tip. */
  tipHeight(): Promise<number>;
  /** The coinbase of the main-chain block at `height`, or null beyond the tip. */
  coinbaseAt(height: number): Promise<CoinbaseTx | null>;
}
