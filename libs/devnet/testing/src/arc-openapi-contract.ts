// Our own reading of ARC's published OpenAPI document, as zod schemas the conformance spec checks
// the devnet node's answers against. Source: bitcoin-sv/arc `pkg/api/arc.yaml` at commit
// e7efc5b67a9d2277d35cf3cbf11d292bbbe8a301 (components.schemas: CommonResponse, ChainInfo,
// TransactionDetails, TransactionSubmitStatus, TransactionResponse, TransactionStatus,
// PolicyResponse, Policy, FeeAmount, Health, ErrorFields and the Error* schemas built on it).
// Written by hand, not generated from or copied out of that file.
//
// The document's rules as they apply here:
// - `required` lists are required keys; a property without `nullable: true` MUST NOT be null
//   (OpenAPI 3.0), so such a property is either absent or of its type: ARC's Go types say the same
//   (`pkg/api/arc.go`: `BlockHash *string json:"blockHash,omitempty"`, sent as "" and 0 before
//   MINED in the document's "mempool" examples).
// - Objects without `additionalProperties: false` may carry more keys (our problem bodies add
//   `errorCode`); `Policy` and `FeeAmount` are closed.
// - `TransactionResponses` (POST /v1/txs) is declared `{transactions: [...]}`, but every example
//   of the same document and ARC's handler (`internal/api/handler/default.go`,
//   `mergeSuccessAndFailResults`) answer a bare array of TransactionResponse | ErrorFields:
//   we check what ARC sends, the bare array.
import { z } from 'zod';

/** `txStatus` enum of TransactionDetails (the 14 statuses of `metamorph_api.proto`). */
export const ARC_TX_STATUSES = [
  'UNKNOWN',
  'QUEUED',
  'RECEIVED',
  'STORED',
  'ANNOUNCED_TO_NETWORK',
  'REQUESTED_BY_NETWORK',
  'SENT_TO_NETWORK',
  'ACCEPTED_BY_NETWORK',
  'SEEN_IN_ORPHAN_MEMPOOL',
  'SEEN_ON_NETWORK',
  'DOUBLE_SPEND_ATTEMPTED',
  'REJECTED',
  'MINED_IN_STALE_BLOCK',
  'MINED',
] as const;

/** OpenAPI `type: integer` with a uint64 / int format. */
const uint = z.number().int().nonnegative();

/** CommonResponse: `timestamp` required, `format: date-time` (RFC 3339), not nullable. */
const commonResponse = z.object({ timestamp: z.iso.datetime({ offset: true }) });

/** ChainInfo: both optional, neither nullable. */
const chainInfo = z.object({ blockHash: z.string().optional(), blockHeight: uint.optional() });

/** TransactionDetails: `txid` and `txStatus` required and not nullable; the rest nullable. */
const transactionDetails = z.object({
  txid: z.string(),
  txStatus: z.enum(ARC_TX_STATUSES),
  merklePath: z.string().nullable().optional(),
  extraInfo: z.string().nullable().optional(),
  competingTxs: z.array(z.string()).nullable().optional(),
});

/** TransactionSubmitStatus: `status` and `title` required, not nullable. */
const transactionSubmitStatus = z.object({ status: z.number().int(), title: z.string() });

/** TransactionResponse (POST /v1/tx 200, each success of POST /v1/txs). */
export const transactionResponse = commonResponse
  .extend(chainInfo.shape)
  .extend(transactionDetails.shape)
  .extend(transactionSubmitStatus.shape);

/** TransactionStatus (GET /v1/tx/{txid} 200). */
export const transactionStatus = commonResponse.extend(chainInfo.shape).extend(transactionDetails.shape);

/** ErrorFields: every problem answer (400, 404, 409, 460–475) and each failure of POST /v1/txs. */
export const errorFields = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  instance: z.string().nullable().optional(),
  txid: z.string().nullable().optional(),
  extraInfo: z.string().nullable().optional(),
});

/** POST /v1/txs 200: what ARC sends (see the header), each entry a response or a problem. */
export const transactionResponses = z.array(z.union([transactionResponse, errorFields]));

/** FeeAmount: closed, both required. */
const feeAmount = z.strictObject({ satoshis: uint, bytes: uint });

/** Policy: closed; four required, `standardFormatSupported` optional, none nullable. */
const policyObject = z.strictObject({
  maxscriptsizepolicy: uint,
  maxtxsigopscountspolicy: uint,
  maxtxsizepolicy: uint,
  miningFee: feeAmount,
  standardFormatSupported: z.boolean().optional(),
});

/**
 * PolicyResponse: CommonResponse and `{policy}` (required). The document puts
 * `additionalProperties: false` on the `{policy}` part of the allOf; ARC's handler sends both
 * (`default.go`, `GETPolicy`), so the check is: no key besides `timestamp` and `policy`.
 */
export const policyResponse = commonResponse.extend({ policy: policyObject }).strict();

/** Health: nothing required; `healthy` boolean, `version` string, `reason` nullable string. */
export const health = z.object({
  healthy: z.boolean().optional(),
  version: z.string().optional(),
  reason: z.string().nullable().optional(),
});

/** The schema's verdict as a list of `path: message` lines (empty when the answer conforms). */
export function contractViolations(schema: z.ZodType, body: unknown): string[] {
  const parsed = schema.safeParse(body);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
}
