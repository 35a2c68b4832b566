/**
 * ARC's transaction statuses and error codes (bitcoin-sv/arc `metamorph_api.proto`,
 * `doc/errors.md`; see /work/shared/research/arc.md §1) and how this client classifies them.
 */

import { ARC_STATUSES, isArcStatus } from '@proofline/chain-domain';
import type { ArcStatus } from '@proofline/chain-domain';

export { ARC_STATUSES, isArcStatus };
export type { ArcStatus };

/**
 * How a status is read:
 * - `pending`: ARC holds the tx but the network has not shown it yet (UNKNOWN…ACCEPTED_BY_NETWORK),
 *   the tx waits for parents (SEEN_IN_ORPHAN_MEMPOOL), or its block went stale and ARC
 *   re-broadcasts it (MINED_IN_STALE_BLOCK: "not final").
 * - `accepted`: SEEN_ON_NETWORK (in the miners' mempools).
 * - `mined`: MINED (with block data).
 * - `double-spend`, `rejected`: final refusals.
 */
export type StatusClass = 'pending' | 'accepted' | 'mined' | 'double-spend' | 'rejected';

const CLASS: Readonly<Record<ArcStatus, StatusClass>> = {
  UNKNOWN: 'pending',
  QUEUED: 'pending',
  RECEIVED: 'pending',
  STORED: 'pending',
  ANNOUNCED_TO_NETWORK: 'pending',
  REQUESTED_BY_NETWORK: 'pending',
  SENT_TO_NETWORK: 'pending',
  ACCEPTED_BY_NETWORK: 'pending',
  SEEN_IN_ORPHAN_MEMPOOL: 'pending',
  SEEN_ON_NETWORK: 'accepted',
  DOUBLE_SPEND_ATTEMPTED: 'double-spend',
  REJECTED: 'rejected',
  MINED_IN_STALE_BLOCK: 'pending',
  MINED: 'mined',
};

export function classifyStatus(status: ArcStatus): StatusClass {
  return CLASS[status];
}

/** ARC's transaction error codes (HTTP status of `/v1/tx`, `status` of a `/v1/txs` entry). */
export const ARC_ERROR_CODES: Readonly<Record<number, string>> = {
  400: 'bad request',
  460: 'not extended format: ARC could not get the parents of the transaction',
  461: 'script validation failed (malformed or failing unlocking script)',
  462: 'invalid inputs',
  463: 'malformed transaction',
  464: 'invalid outputs (dust below 1 sat, or an OP_RETURN output carrying satoshis)',
  465: 'fee too low',
  466: 'conflicting transaction found (double spend)',
  467: 'mined ancestors missing from the BEEF',
  468: 'invalid BEEF',
  469: 'invalid merkle roots in the BEEF',
  471: 'input frozen by a policy',
  472: 'input frozen by a consensus rule',
  473: 'cumulative fee too low',
  474: 'transaction too large',
  475: 'mined ancestors missing',
};

/** True for the codes that refuse a transaction for good (these bytes will never be accepted). */
export function isRejectionCode(code: number): boolean {
  return code === 400 || (code >= 460 && code <= 475 && code !== 470);
}

export function describeArcCode(code: number): string {
  return ARC_ERROR_CODES[code] ?? `ARC error ${code}`;
}
