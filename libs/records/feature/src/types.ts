import type { Config } from '@proofline/shared-config';

/** Who is calling (from the auth middleware). */
export interface Caller {
  readonly tenant: string;
}

/** Enqueues the publication of an accepted record (BullMQ in the apps, jobId = txId). */
export interface PublishQueue {
  /** `unit`: the records partition the record was stored in (saves its publisher an index read). */
  enqueue(txId: string, unit?: string): Promise<void>;
}

/**
 * The answers of the records use cases: inferred from the zod schemas in records-domain, which
 * the REST app also publishes as its OpenAPI components (one definition for both).
 */
export type {
  Confirmation,
  DeleteResult,
  IndependentWriteResult,
  LinkedWriteResult,
  MatchResult,
  NavigateResult,
  StatusResult,
} from '@proofline/records-domain';

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
  'features' | 'encoders' | 'maxLinks' | 'maxRecordBytes' | 'maxPendingPublications' | 'maxUnconfirmedLinks'
>;

/** Raw inputs as they arrive from REST or GraphQL (validated here, once). */
export interface WriteInput {
  readonly body: Uint8Array | undefined;
  readonly encode: string | undefined;
}
