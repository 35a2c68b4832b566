import type { Config } from '@proofline/shared-config';
import type { TscMerkleProof } from '@proofline/chain-domain';
import type { EncodingEntry, PublicationState } from '@proofline/records-domain';

/** Who is calling (from the auth middleware). */
export interface Caller {
  readonly tenant: string;
}

/** Enqueues the publication of an accepted record (BullMQ in the apps, jobId = txId). */
export interface PublishQueue {
  enqueue(txId: string): Promise<void>;
}

export interface Confirmation {
  readonly confirmedBlocks: number;
  readonly blockHash: string;
  readonly blockTimestamp: string;
  readonly merkleProof: TscMerkleProof;
}

export interface LinkedWriteResult {
  readonly txId: string;
  readonly updateToken: string;
  readonly encoding: EncodingEntry[];
}
export interface IndependentWriteResult {
  readonly txId: string;
  readonly encoding: EncodingEntry[];
}
export interface StatusResult {
  readonly confirmation: Confirmation | null;
  /** Linked records only. */
  readonly updatable?: boolean;
  /** Where publication stands: `pending` (accepted, not yet in the mempool), `published`, `failed`. */
  readonly publication: PublicationState;
  /** Only when `publication` is `failed`: the chain's code and reason, e.g. `INVALID_TX: ARC 461: script failed: …`. */
  readonly failure?: string;
}
export interface MatchResult {
  readonly match: boolean;
  readonly confirmation: Confirmation | null;
}
export interface NavigateResult {
  readonly txIds: string[];
  readonly endOfLinks: boolean;
  readonly maxLinksRequestable: number;
}
export interface ContentResult {
  readonly bytes: Buffer;
  readonly contentType: string;
  readonly txId: string;
}

/** {@link RecordReads.chainPage} input: positions are 0-based, bounds exclusive. */
export interface ChainPageRequest {
  readonly first?: number;
  readonly after?: number;
  readonly last?: number;
  readonly before?: number;
}
export interface ChainPage {
  /** Records in the whole chain. */
  readonly total: number;
  /** Position of `txIds[0]`. */
  readonly start: number;
  readonly txIds: string[];
}

/** The configuration the records use cases read. */
export type RecordsConfig = Pick<
  Config,
  'features' | 'encoders' | 'maxLinks' | 'maxRecordBytes' | 'maxPendingPublications'
>;

/** Raw inputs as they arrive from REST or GraphQL (validated here, once). */
export interface WriteInput {
  readonly body: Uint8Array | undefined;
  readonly encode: string | undefined;
}
