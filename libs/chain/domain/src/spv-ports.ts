import type { TscMerkleProof } from './ports';

/** A mined transaction with what proves it (input of {@link SpvCodec.toBeef}). */
export interface ProvenTransaction {
  /** The serialized transaction. */
  readonly rawTx: Uint8Array;
  /** TSC branch proof of the transaction against its block header. */
  readonly proof: TscMerkleProof;
  /** Height of the block the proof targets (a BUMP carries it). */
  readonly blockHeight: number;
}

/** What a BEEF holds about its subject transaction, read back independently of the receipt around it. */
export interface BeefContents {
  /** txId of the subject transaction, computed from its bytes. */
  readonly txId: string;
  /** The subject transaction, hex. */
  readonly rawTx: string;
  /** Block height written in the subject's Merkle path. */
  readonly blockHeight: number;
  /** Merkle root the subject's path computes (display hex). */
  readonly merkleRoot: string;
}

/** The record bytes carried by a record transaction's data output. */
export interface RecordData {
  /** Output 1 (`OP_FALSE OP_RETURN <bytes>`); null for a transaction without one (a delete). */
  readonly data: Uint8Array | null;
  /** Content type from the header output; null when output 0 is not a record header. */
  readonly contentType: string | null;
}

/**
 * SPV serialisation of proven transactions (BEEF, BRC-62/95) and reading of record transactions,
 * for receipts. Chain-agnostic: every BSV chain (the devnet, ARC) serves proofs in the TSC form.
 */
export interface SpvCodec {
  /**
   * The Atomic BEEF (BRC-95) of a mined transaction with its Merkle path, hex.
   * @throws Error when the transaction or the proof does not parse.
   */
  toBeef(tx: ProvenTransaction): string;
  /**
   * Reads a BEEF (V1, V2 or Atomic) back.
   * @throws Error when it does not parse or its subject has no Merkle path.
   */
  readBeef(hex: string): BeefContents;
  /**
   * The record bytes and content type of a record transaction.
   * @throws Error when the transaction does not parse.
   */
  recordData(rawTx: string): RecordData;
}
