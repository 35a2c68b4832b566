/**
 * ARC's wire vocabulary as the devnet node speaks it (bitcoin-sv/arc `pkg/api/arc.yaml`,
 * `doc/errors.md`, `metamorph_api.proto`; see /work/shared/research/arc.md §1).
 */

import type { ArcStatus } from '@proofline/chain-domain';

/** The node's view of one transaction: the fields of ARC's success answer minus the timestamp. */
export interface TxStatusRecord {
  readonly txid: string;
  readonly txStatus: ArcStatus;
  readonly blockHash: string | null;
  readonly blockHeight: number | null;
  /** BRC-74 BUMP hex when MINED, else "". */
  readonly merklePath: string;
  readonly extraInfo: string;
  readonly competingTxs: readonly string[] | null;
}

/**
 * ARC's success body (HTTP 200) for /v1/tx, /v1/txs entries and GET /v1/tx/{txid}. `blockHash`
 * and `blockHeight` MUST NOT be null (not nullable in ARC's OpenAPI document): before MINED they
 * are "" and 0, as ARC sends them.
 */
export function successBody(r: TxStatusRecord, now: Date): Record<string, unknown> {
  return {
    timestamp: now.toISOString(),
    txid: r.txid,
    txStatus: r.txStatus,
    blockHash: r.blockHash ?? '',
    blockHeight: r.blockHeight ?? 0,
    merklePath: r.merklePath,
    extraInfo: r.extraInfo,
    competingTxs: r.competingTxs,
    status: 200,
    title: 'OK',
  };
}

/** ARC's callback body for one status change (`internal/callbacker`). */
export function callbackBody(r: TxStatusRecord, now: Date): Record<string, unknown> {
  const body: Record<string, unknown> = { timestamp: now.toISOString(), txid: r.txid, txStatus: r.txStatus };
  if (r.extraInfo) body['extraInfo'] = r.extraInfo;
  if (r.competingTxs) body['competingTxs'] = r.competingTxs;
  if (r.merklePath) body['merklePath'] = r.merklePath;
  if (r.blockHash) body['blockHash'] = r.blockHash;
  if (r.blockHeight !== null) body['blockHeight'] = r.blockHeight;
  return body;
}

/** ARC's error codes the node answers, with ARC's titles and our errorCode (problem+json). */
export const ARC_ERRORS: Readonly<Record<number, { title: string; errorCode: string }>> = {
  400: { title: 'Bad request', errorCode: 'ARC_BAD_REQUEST' },
  401: { title: 'Security requirements failed', errorCode: 'ARC_UNAUTHORIZED' },
  404: { title: 'Not found', errorCode: 'ARC_NOT_FOUND' },
  409: { title: 'Generic error', errorCode: 'ARC_GENERIC_ERROR' },
  413: { title: 'Payload too large', errorCode: 'ARC_PAYLOAD_TOO_LARGE' },
  460: { title: 'Not extended format', errorCode: 'ARC_NOT_EXTENDED_FORMAT' },
  461: { title: 'Invalid unlocking scripts', errorCode: 'ARC_UNLOCKING_SCRIPTS' },
  462: { title: 'Invalid inputs', errorCode: 'ARC_INPUTS' },
  463: { title: 'Malformed transaction', errorCode: 'ARC_MALFORMED' },
  464: { title: 'Invalid outputs', errorCode: 'ARC_OUTPUTS' },
  465: { title: 'Fee too low', errorCode: 'ARC_FEE_TOO_LOW' },
  466: { title: 'Conflicting tx found', errorCode: 'ARC_CONFLICT' },
  500: { title: 'Internal server error', errorCode: 'ARC_INTERNAL_ERROR' },
  503: { title: 'Service unavailable', errorCode: 'ARC_UNAVAILABLE' },
};

/** ARC's problem JSON `{type,title,status,detail,instance,txid,extraInfo}` plus our `errorCode`. */
export function problemBody(
  status: number,
  detail: string,
  txid: string | null = null,
  instance: string | null = null,
): Record<string, unknown> {
  const known = ARC_ERRORS[status];
  return {
    type: `https://bitcoin-sv.github.io/arc/#/errors?id=_${status}`,
    title: known?.title ?? 'Error',
    status,
    detail,
    instance,
    txid,
    extraInfo: '',
    errorCode: known?.errorCode ?? `ARC_${status}`,
  };
}

/** A transaction the node refused with an ARC error code (4xx problem, not a status). */
export interface TxRefusal {
  readonly code: number;
  readonly detail: string;
  readonly txid: string | null;
}
