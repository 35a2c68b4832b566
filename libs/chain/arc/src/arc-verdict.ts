/**
 * The one reading of ARC's answers (bitcoin-sv/arc `metamorph_api.proto`, `doc/errors.md`; see
 * /work/shared/research/arc.md §1): every status, error code and problem body becomes a
 * {@link BroadcastVerdict} here and nowhere else — submissions, status polls, re-broadcasts,
 * callbacks, the wallet's splits.
 *
 * | ARC answer | verdict |
 * |---|---|
 * | SEEN_ON_NETWORK | `accepted` |
 * | MINED (with block data: `mined` set; without: `mined: null`) | `accepted` |
 * | UNKNOWN … ACCEPTED_BY_NETWORK, SEEN_IN_ORPHAN_MEMPOOL, MINED_IN_STALE_BLOCK | `pending`, with the status |
 * | REJECTED | `refused`, final |
 * | DOUBLE_SPEND_ATTEMPTED | `refused`, not final (ARC documents it ending MINED or REJECTED), `competingTxs` |
 * | 4xx problem naming our txid: 460 | `refused`, not final (parents not found yet) |
 * | 4xx problem naming our txid: 400, 461–475 | `refused`, final |
 * | 4xx problem naming no txid of ours | `request-problem` |
 *
 * Transient faults (network, timeout, 5xx, 429, 409, malformed answers) are not verdicts: the
 * client throws `ArcTransientError`.
 */

import { ARC_STATUSES, isArcStatus } from '@proofline/chain-domain';
import type {
  ArcStatus,
  BroadcastVerdict,
  PendingVerdict,
  RefusedVerdict,
  RequestProblemVerdict,
} from '@proofline/chain-domain';

export { ARC_STATUSES, isArcStatus };
export type { ArcStatus };

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

/** True for the codes ARC answers to refuse a transaction or a request (not a transient fault). */
export function isRejectionCode(code: number): boolean {
  return code === 400 || (code >= 460 && code <= 475 && code !== 470);
}

export function describeArcCode(code: number): string {
  return ARC_ERROR_CODES[code] ?? `ARC error ${code}`;
}

/** The fields of a status answer (a 200 of `/v1/tx`, an entry of `/v1/txs`, `GET /v1/tx/{txid}`, a callback). */
export interface StatusAnswer {
  readonly txStatus: ArcStatus;
  readonly extraInfo?: string | null;
  readonly competingTxs?: readonly string[] | null;
  readonly blockHash?: string | null;
  readonly blockHeight?: number | null;
  readonly merklePath?: string | null;
}

/** The fields of ARC's problem body (RFC 7807 plus `txid` and `extraInfo`). */
export interface ProblemAnswer {
  readonly detail?: string | null;
  readonly extraInfo?: string | null;
  readonly txid?: string | null;
}

const HASH_HEX = /^[0-9a-f]{64}$/;

/** The verdict of a status ARC reported for `txId` (already checked to be ours). */
export function verdictOfStatus(txId: string, a: StatusAnswer): BroadcastVerdict {
  const status = a.txStatus;
  const extraInfo = a.extraInfo ?? '';
  switch (status) {
    case 'SEEN_ON_NETWORK':
      return { kind: 'accepted', txId, status, mined: null };
    case 'MINED': {
      const blockHash = (a.blockHash ?? '').toLowerCase();
      // An empty or partial MINED answer is known to happen (go-wallet-toolbox#1017): seen, and
      // asked again later rather than guessed.
      const complete = HASH_HEX.test(blockHash) && a.blockHeight != null && !!a.merklePath;
      return {
        kind: 'accepted',
        txId,
        status,
        mined: complete
          ? { blockHash, blockHeight: a.blockHeight as number, merklePath: a.merklePath as string }
          : null,
      };
    }
    case 'REJECTED':
      return refused(txId, 'REJECTED', `ARC REJECTED: ${extraInfo || 'rejected by the network'}`, true, []);
    case 'DOUBLE_SPEND_ATTEMPTED': {
      const competingTxs = (a.competingTxs ?? []).map((t) => t.toLowerCase());
      const competing = competingTxs.length ? ` (competing: ${competingTxs.join(', ')})` : '';
      const reason = `ARC DOUBLE_SPEND_ATTEMPTED: ${extraInfo || 'double spend attempted'}${competing}`;
      return refused(txId, 'DOUBLE_SPEND_ATTEMPTED', reason, false, competingTxs);
    }
    default:
      return { kind: 'pending', txId, status: status satisfies PendingVerdict['status'], detail: extraInfo };
  }
}

/**
 * The verdict of a problem answer (`httpStatus` a rejection code) to a submission of `txId`:
 * about the transaction when the problem names it, about the request otherwise.
 */
export function verdictOfProblem(
  txId: string,
  httpStatus: number,
  problem: ProblemAnswer | null,
): RefusedVerdict | RequestProblemVerdict {
  const detail = problemDetail(httpStatus, problem);
  if (problem?.txid?.toLowerCase() !== txId) return { kind: 'request-problem', txId, httpStatus, detail };
  return refused(txId, httpStatus, detail, httpStatus !== 460, []);
}

/** `ARC <code>: <meaning>: <ARC's detail and extraInfo>` (bounded). */
export function problemDetail(httpStatus: number, problem: ProblemAnswer | null): string {
  const said = [problem?.detail, problem?.extraInfo].filter((s): s is string => !!s).join(': ');
  const meaning = describeArcCode(httpStatus);
  return `ARC ${httpStatus}: ${(said ? `${meaning}: ${said}` : meaning).slice(0, 500)}`;
}

function refused(
  txId: string,
  code: RefusedVerdict['code'],
  reason: string,
  final: boolean,
  competingTxs: readonly string[],
): RefusedVerdict {
  return { kind: 'refused', txId, code, reason, final, competingTxs };
}
