import type { BlockHeader } from './block';
import type { BroadcastVerdict } from './broadcast-verdict';

/**
 * The contract between the records feature and a chain (ARC: a BSV network or the devnet node).
 * Records code depends only on these types; chain libs implement them.
 * All ids are txIds / block hashes as 64 lowercase hex characters in display (reversed) order.
 */

/** What a record transaction carries. */
export type RecordTxKind = 'independent' | 'create' | 'update' | 'delete';

/** A transaction output that can be spent. */
export interface Outpoint {
  readonly txId: string;
  readonly vout: number;
  readonly satoshis: number;
}

export interface RecordTxRequest {
  readonly kind: RecordTxKind;
  /** The (encoded) record bytes published in the data output; absent for `delete`. */
  readonly data?: Uint8Array;
  /** Content type of `data`, carried in the header output. */
  readonly contentType?: string;
  /** For update/delete: the previous record's link output, spent as input 0. */
  readonly spends?: Outpoint;
  /** UTXOs of the funding wallet's pool (P2PKH to the funding key), spent after `spends`; at least one. */
  readonly funding: readonly Outpoint[];
  /** Fee rate for this transaction, satoshis per 1000 bytes (default: the builder's). */
  readonly satoshisPerKilobyte?: number;
}

export interface BuiltTransaction {
  readonly txId: string;
  /** The serialized, signed transaction (bytes; hex only where a wire or an answer speaks hex). */
  readonly rawTx: Uint8Array;
  /**
   * The same transaction in BIP-239 Extended Format (each input with the satoshis and script it
   * spends): what is broadcast, the first time and every time. Absent only from builders that make
   * no real transactions (test doubles).
   */
  readonly ef?: Uint8Array;
  /** The "fund for next" output of a linked create/update (output 2); null otherwise. */
  readonly linkOutput: Outpoint | null;
  /** The funding outpoints it spends (the request's `funding`), in input order. */
  readonly fundingSpent: readonly Outpoint[];
  /** Its change output back to the funding key (the last output); null when none (below dust). */
  readonly change: Outpoint | null;
  /** Satoshis paid as fee (inputs − outputs). */
  readonly fee: number;
}

/** Builds and signs record transactions synchronously, so a write knows its txId at once. */
export interface TransactionBuilder {
  build(request: RecordTxRequest): BuiltTransaction;
  /**
   * Satoshis ONE funding UTXO must hold to pay for `request` (fee at its rate + link output −
   * spent link), without change: the `minSatoshis` of the pool reservation made before `build`.
   */
  fundingNeeded(request: Omit<RecordTxRequest, 'funding'>): number;
}

/** Thrown by `build` when the funding UTXOs cannot pay the outputs and the fee. */
export class InsufficientFundingError extends Error {
  override readonly name = 'InsufficientFundingError';
  constructor(
    readonly needed: number,
    readonly available: number,
  ) {
    super(`funding inputs hold ${available} sat; the transaction needs ${needed} sat`);
  }
}

/**
 * Accepts transactions into the chain's mempool. MUST be idempotent by txId. Expected outcomes
 * are a {@link BroadcastVerdict}; a transient fault (network, timeout, 5xx) throws.
 */
export interface ChainPublisher {
  /**
   * `rawTx`: the bytes ARC's `rawTx` field carries, Extended Format or the standard serialization.
   * `tenant`: the record's tenant when the caller knows it; chains ignore it, a wrapper may use it
   * (the webhooks watch step, which would otherwise read it from the record first).
   */
  submit(tx: {
    readonly txId: string;
    readonly rawTx: Uint8Array;
    readonly tenant?: string;
  }): Promise<BroadcastVerdict>;
}

/** TSC Merkle proof (JSON form): https://tsc.bitcoinassociation.net/standards/merkle-proof-standardised-format/ */
export interface TscMerkleProof {
  readonly index: number;
  readonly txOrId: string;
  /** The 80-byte block header, hex. */
  readonly target: string;
  /** Sibling hashes from the leaf level up; "*" where the node is a duplicate of the running hash. */
  readonly nodes: readonly string[];
  readonly targetType: 'header';
  readonly proofType: 'branch';
  readonly composite: false;
}

/** Where a mined transaction sits. */
export interface TxInclusion {
  readonly blockHash: string;
  readonly blockHeight: number;
  /** Header time. */
  readonly blockTime: Date;
  readonly index: number;
  /** Null until the proof builder has run for the block. */
  readonly proof: TscMerkleProof | null;
}

/** Read side of a chain. Batched: one call answers many txIds in one round trip. */
export interface ChainReader {
  tipHeight(): Promise<number>;
  inclusions(txIds: readonly string[]): Promise<(TxInclusion | null)[]>;
}

/** A block as readers see it (no transaction list: page it with {@link BlockReader.blockTxIds}). */
export interface Block {
  readonly hash: string;
  readonly height: number;
  readonly header: BlockHeader;
  /** The 80-byte header, hex (the `target` of TSC proofs). */
  readonly headerHex: string;
  /** Header time. */
  readonly time: Date;
  /** Transactions in the block, coinbase included. */
  readonly txCount: number;
}

/** The newest block. */
export interface ChainTip {
  readonly hash: string;
  readonly height: number;
  readonly time: Date;
}

/** A block holding transactions of one owner (for records: a tenant), as an owner index lists it. */
export interface OwnerBlock {
  readonly hash: string;
  readonly height: number;
  /** Header time. */
  readonly time: Date;
  /** The owner's transactions with a proof in this block. */
  readonly count: number;
}

/** A block's place in an owner's list (newest first: height, then hash, both descending). */
export interface OwnerBlockKey {
  readonly height: number;
  readonly hash: string;
}

/**
 * Which page of an owner's blocks: `first` from the newest end of the window or `last` from its
 * oldest end (exactly one); `after` / `before` keep only blocks older / newer than that key.
 */
export interface OwnerBlocksPage {
  readonly first?: number;
  readonly last?: number;
  readonly after?: OwnerBlockKey;
  readonly before?: OwnerBlockKey;
}

/** A page of an owner's blocks, newest first. */
export interface OwnerBlocksWindow {
  /** All the owner's blocks. */
  readonly total: number;
  readonly blocks: readonly OwnerBlock[];
  /** Older blocks exist beyond this page (Relay `hasNextPage`). */
  readonly hasOlder: boolean;
  /** Newer blocks exist beyond this page (Relay `hasPreviousPage`). */
  readonly hasNewer: boolean;
}

/** Announced after each committed block (the block is readable by then). */
export interface BlockEvent {
  readonly hash: string;
  readonly height: number;
  /** Header time, seconds since the epoch. */
  readonly time: number;
  /** Transactions in the block, coinbase included. */
  readonly txCount: number;
}

/**
 * Read side of a chain's blocks: what the GraphQL facade needs, whichever chain serves it.
 * Heights start at 0 (genesis); hashes are display hex.
 */
export interface BlockReader {
  /** The tip; null before the first block. */
  tip(): Promise<ChainTip | null>;
  blockByHash(hash: string): Promise<Block | null>;
  blockByHeight(height: number): Promise<Block | null>;
  /** TxIds of block `hash` in positions [start, end) (0 = coinbase), or null when no such block. */
  blockTxIds(hash: string, start: number, end: number): Promise<readonly string[] | null>;
  /** A page of the blocks holding proven transactions of `owner` (a tenant), newest first. */
  ownerBlocks(owner: string, page: OwnerBlocksPage): Promise<OwnerBlocksWindow>;
  /** Block `hash` as `owner`'s block list has it; null when the owner has no proven transaction in it. */
  ownerBlock(owner: string, hash: string): Promise<OwnerBlock | null>;
  /**
   * The proven txIds of `owner` in block `hash`, positions [start, end) of the owner's list there
   * (in the order their proofs were stored), with their count; count 0 when it has none there.
   */
  ownerTxIds(owner: string, hash: string, start: number, end: number): Promise<{ count: number; txIds: string[] }>;
  /**
   * New blocks as they are committed, from now on, for as long as the iterator is not returned.
   * Every instance hears every block. An event may be missed (e.g. across a reconnection):
   * consumers re-read state rather than count events.
   */
  blockEvents(): AsyncIterableIterator<BlockEvent>;
}
