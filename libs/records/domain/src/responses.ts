import { z } from 'zod';

/**
 * What the records use cases answer, as zod schemas: the TypeScript types below are inferred from
 * them, and the REST app registers the same instances as OpenAPI components (so a field added
 * here is in the document, and the contract spec checks real responses against it). The
 * descriptions are the documentation of each field; they MUST stay true of what is served.
 * Objects are closed in the generated JSON Schema: a field served but not declared here fails
 * the contract spec.
 */

/** A read-only view of a schema's output: response values are built once and never changed. */
export type Answer<S extends z.ZodType> = DeepReadonly<z.output<S>>;
type DeepReadonly<T> = T extends (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

export const TxId = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/)
  .describe('Transaction id: 64 hex characters (lowercase in responses).');

const isoDateTime = z.iso.datetime({ offset: true });

export const EncodingEntry = z
  .object({ contentType: z.string(), output: z.string() })
  .describe(
    'One encoder step: the content type after the step (`text/plain; event-encoded=SHA256|Base64`, binary steps `application/octet-stream; event-encoded=SHA256`) and its output (text, or lowercase hex for binary). Salts are never included.',
  );
/** One entry of a write result's `encoding[]`, one per step. */
export type EncodingEntry = Answer<typeof EncodingEntry>;

export const LinkedWriteResult = z
  .object({
    txId: TxId,
    updateToken: z.string().regex(/^utk_[A-Za-z0-9_-]{43}$/),
    encoding: z.array(EncodingEntry),
  })
  .describe(
    'An accepted linked create or update: the txId at once, a fresh updateToken for the next version (shown only here), and the encoding steps.',
  );
export type LinkedWriteResult = Answer<typeof LinkedWriteResult>;

export const IndependentWriteResult = z
  .object({ txId: TxId, encoding: z.array(EncodingEntry) })
  .describe('An accepted independent record.');
export type IndependentWriteResult = Answer<typeof IndependentWriteResult>;

export const DeleteResult = z.object({ txId: TxId }).describe('The accepted delete (terminating) transaction.');
export type DeleteResult = Answer<typeof DeleteResult>;

export const MerkleProof = z
  .object({
    index: z.int().min(0),
    txOrId: TxId,
    target: z
      .string()
      .regex(/^[0-9a-f]{160}$/)
      .describe('The 80-byte block header, hex.'),
    nodes: z
      .array(z.string().regex(/^([0-9a-f]{64}|\*)$/))
      .describe('Sibling hashes from the leaf up; "*" for a duplicated node.'),
    targetType: z.literal('header'),
    proofType: z.literal('branch'),
    composite: z.literal(false),
  })
  .describe('TSC Merkle proof (JSON form).');

export const Confirmation = z
  .object({
    confirmedBlocks: z.int().min(1),
    blockHash: z.string().regex(/^[0-9a-f]{64}$/),
    blockTimestamp: isoDateTime,
    merkleProof: MerkleProof,
  })
  .describe(
    'Where the record was mined: depth (tip height − block height + 1), block hash, header time and the proof.',
  );
export type Confirmation = Answer<typeof Confirmation>;

export const PublicationState = z
  .enum(['pending', 'published', 'failed'])
  .describe(
    'Where the transaction is: accepted and queued, in the mempool or mined, or permanently rejected by the chain.',
  );
/** Publication state: accepted (in the outbox), published to the chain, or rejected for good. */
export type PublicationState = z.output<typeof PublicationState>;

const failure = z
  .string()
  .optional()
  .describe(
    'Only when `publication` is `failed`: the chain’s code and reason, e.g. `INVALID_TX: ARC 461: script failed: …`.',
  );

export const LinkedStatus = z
  .object({
    confirmation: Confirmation.nullable(),
    updatable: z.boolean(),
    publication: PublicationState,
    failure,
  })
  .describe('Status of a linked record.');

export const RecordStatus = z
  .object({ confirmation: Confirmation.nullable(), publication: PublicationState, failure })
  .describe('Status of an independent record.');

/** Either family's status: `updatable` is present for linked records only. */
export const StatusResult = LinkedStatus.partial({ updatable: true });
export type StatusResult = Answer<typeof StatusResult>;

export const MatchResult = z
  .object({ match: z.boolean(), confirmation: Confirmation.nullable() })
  .describe('Whether the content (and link) match the record.');
export type MatchResult = Answer<typeof MatchResult>;

export const NavigateResult = z
  .object({ txIds: z.array(TxId), endOfLinks: z.boolean(), maxLinksRequestable: z.int().min(1) })
  .describe('The txIds walked from the start (excluded), moving away from it.');
export type NavigateResult = Answer<typeof NavigateResult>;
