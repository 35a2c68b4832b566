/**
 * The contract between the records feature and a chain (the embedded devnet today, a real BSV
 * network adapter later). Records code depends only on these types; chain libs implement them.
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
}

export interface BuiltTransaction {
  readonly txId: string;
  /** Serialized, signed transaction. */
  readonly rawHex: string;
  /** The "fund for next" output of a linked create/update (output 2); null otherwise. */
  readonly linkOutput: Outpoint | null;
}

/** Builds and signs record transactions synchronously, so a write knows its txId at once. */
export interface TransactionBuilder {
  build(request: RecordTxRequest): BuiltTransaction;
}

export type SubmitResult =
  | { readonly status: 'accepted' }
  | { readonly status: 'already-known' }
  | { readonly status: 'rejected'; readonly code: 'DOUBLE_SPEND' | 'INVALID_TX' | 'MISSING_INPUT'; readonly detail: string };

/** Accepts transactions into the chain's mempool. MUST be idempotent by txId. */
export interface ChainPublisher {
  submit(tx: { readonly txId: string; readonly rawHex: string }): Promise<SubmitResult>;
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
