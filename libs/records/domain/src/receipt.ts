import { z } from 'zod';
import type { RecordFamily } from './record';

/** The `family` of a receipt: the REST collection the record belongs to. */
export type ReceiptFamily = 'records' | 'linkedrecords';

export function receiptFamily(family: RecordFamily): ReceiptFamily {
  return family === 'linked' ? 'linkedrecords' : 'records';
}

const hex = (what: string) => z.string().regex(/^(?:[0-9a-f]{2})+$/, `${what} must be lowercase hex`);
const hash = (what: string) => z.string().regex(/^[0-9a-f]{64}$/, `${what} must be 64 lowercase hex characters`);

/**
 * A receipt (`GET …/{txId}/receipt`, version 1): everything needed to check a record with no
 * service: the raw transaction, its TSC proof, the 80-byte block header, and the same proof as
 * Atomic BEEF. `encoding` names the encoder steps only: salts are never part of a receipt.
 * Parsing a receipt file (the CLI) goes through this schema: unknown fields are refused.
 */
export const Receipt = z.strictObject({
  version: z.literal(1),
  txId: hash('txId'),
  family: z.enum(['records', 'linkedrecords']),
  /** Linked records only: the record this one links to (null for a create). */
  prevTxId: hash('prevTxId').nullable().optional(),
  rawTx: hex('rawTx'),
  encoding: z.array(z.enum(['SHA256', 'Base64'])).max(8),
  contentType: z.string().max(200),
  merkleProof: z.strictObject({
    index: z.number().int().nonnegative(),
    txOrId: hash('merkleProof.txOrId'),
    target: z.string().regex(/^[0-9a-f]{160}$/, 'merkleProof.target must be an 80-byte header in lowercase hex'),
    nodes: z.array(z.union([hash('merkleProof node'), z.literal('*')])).max(64),
    targetType: z.literal('header'),
    proofType: z.literal('branch'),
    composite: z.literal(false),
  }),
  blockHeader: z.string().regex(/^[0-9a-f]{160}$/, 'blockHeader must be 80 bytes in lowercase hex'),
  blockHash: hash('blockHash'),
  blockHeight: z.number().int().nonnegative(),
  beef: hex('beef'),
});
export type Receipt = z.infer<typeof Receipt>;
