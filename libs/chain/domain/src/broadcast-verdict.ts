import { isHashHex } from './block';

/**
 * Every status ARC reports (bitcoin-sv/arc `metamorph_api.proto`), with its numeric order (a
 * higher one is further along): shared by the ARC client (chain-arc) and the devnet node that
 * speaks ARC's API (libs/devnet), so the two sides of the wire cannot disagree.
 */
export const ARC_STATUSES = {
  UNKNOWN: 0,
  QUEUED: 10,
  RECEIVED: 20,
  STORED: 30,
  ANNOUNCED_TO_NETWORK: 40,
  REQUESTED_BY_NETWORK: 50,
  SENT_TO_NETWORK: 60,
  ACCEPTED_BY_NETWORK: 70,
  SEEN_IN_ORPHAN_MEMPOOL: 80,
  SEEN_ON_NETWORK: 90,
  DOUBLE_SPEND_ATTEMPTED: 100,
  REJECTED: 110,
  MINED_IN_STALE_BLOCK: 115,
  MINED: 120,
} as const;

export type ArcStatus = keyof typeof ARC_STATUSES;

export function isArcStatus(value: unknown): value is ArcStatus {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ARC_STATUSES, value);
}

/**
 * What a broadcast (or a status query) learnt about one transaction: the ONE reading of an ARC
 * answer, built in one place (`verdictOf…` below, called by @proofline/chain-arc) and read by the publisher,
 * the confirmations, the wallet's splitter and any other chain adapter (the in-memory test chain).
 * Each variant says what ARC means, not what a consumer does with it: the consumers' policies
 * (what frees change, what fails a record) are theirs, written next to where they read it.
 */
export type BroadcastVerdict = AcceptedVerdict | PendingVerdict | RefusedVerdict | RequestProblemVerdict;

/** ARC has the transaction in the miners' mempools (SEEN_ON_NETWORK) or in a block (MINED). */
export interface AcceptedVerdict {
  readonly kind: 'accepted';
  readonly txId: string;
  readonly status: 'SEEN_ON_NETWORK' | 'MINED';
  /** MINED with its block data; null for SEEN_ON_NETWORK and for a MINED answer without block data. */
  readonly mined: MinedIn | null;
}

/** A MINED answer's block and BRC-74 BUMP (hex). Unverified: check it against a header before trusting it. */
export interface MinedIn {
  readonly blockHash: string;
  readonly blockHeight: number;
  readonly merklePath: string;
}

/**
 * ARC holds the transaction but the network has not shown it yet, or not for good: the status
 * reached so far (UNKNOWN … ACCEPTED_BY_NETWORK when `X-WaitFor` timed out; SEEN_IN_ORPHAN_MEMPOOL:
 * a parent is missing; MINED_IN_STALE_BLOCK: its block was orphaned and ARC re-broadcasts it).
 */
export interface PendingVerdict {
  readonly kind: 'pending';
  readonly txId: string;
  readonly status: Exclude<ArcStatus, 'SEEN_ON_NETWORK' | 'MINED' | 'REJECTED' | 'DOUBLE_SPEND_ATTEMPTED'>;
  /** ARC's extraInfo, or ''. */
  readonly detail: string;
}

/**
 * True when a pending verdict says ARC holds the transaction and nothing stands in its way: every
 * pending status but SEEN_IN_ORPHAN_MEMPOOL (a parent is missing, so the network cannot take it
 * yet). ARC validated and stored it (RECEIVED … ACCEPTED_BY_NETWORK when `X-WaitFor` was met or
 * timed out, MINED_IN_STALE_BLOCK while it re-broadcasts): the transaction is published, not yet
 * seen. Its publication and a refused record's revival read it the same way; only SEEN_ON_NETWORK
 * or MINED frees its change.
 */
export function heldByArc(v: PendingVerdict): boolean {
  return v.status !== 'SEEN_IN_ORPHAN_MEMPOOL';
}

/** ARC's error code (46x) or the status that refused a stored transaction. */
export type RefusalCode = number | 'REJECTED' | 'DOUBLE_SPEND_ATTEMPTED';

/**
 * ARC refused this transaction, by its txid: an error code of its own (46x) or a refusing status.
 * `final` is false where ARC documents that the refusal may still turn (DOUBLE_SPEND_ATTEMPTED
 * ends MINED or REJECTED; 460: the parents were not found yet, a later send may pass).
 */
export interface RefusedVerdict {
  readonly kind: 'refused';
  readonly txId: string;
  readonly code: RefusalCode;
  /** Human reason, led by ARC's code (`ARC 461: script validation failed: …`). */
  readonly reason: string;
  readonly final: boolean;
  /** For DOUBLE_SPEND_ATTEMPTED: the competing transactions ARC named (lowercase txIds); else empty. */
  readonly competingTxs: readonly string[];
}

/**
 * An answer about the request, not about this transaction: a problem that names no txid of ours
 * (a 400 for a bad header or body, an unparsable request). Says nothing about the transaction.
 */
export interface RequestProblemVerdict {
  readonly kind: 'request-problem';
  readonly txId: string;
  readonly httpStatus: number;
  /** Human detail, led by ARC's code (`ARC 400: bad request: …`). */
  readonly detail: string;
}

/** A verdict that refuses: the transaction (`refused`) or the request it came in (`request-problem`). */
export type Refusal = RefusedVerdict | RequestProblemVerdict;

/** The refusal code of a refused or request-problem verdict, as counted and matched (`'461'`, `'REJECTED'`). */
export function refusalCode(v: Refusal): string {
  return String(v.kind === 'refused' ? v.code : v.httpStatus);
}

/**
 * True when ARC refused the transaction while holding it (a refusing status), false for an error
 * code answered to the submission itself (46x, 400: never announced to the network).
 */
export function reachedNetwork(v: Refusal): boolean {
  return v.kind === 'refused' && typeof v.code !== 'number';
}

/**
 * ARC's codes that prove a transaction can never be mined, by any node, whatever else was
 * broadcast: its script fails (461), it is malformed (463), its outputs are invalid (464). Every
 * other refusal depends on this ARC, its policy or this moment (460 parents not found yet, 465 fee,
 * 474 size, 462/466 inputs, REJECTED, DOUBLE_SPEND_ATTEMPTED): another broadcast may still be mined.
 */
export const NEVER_MINABLE_CODES: readonly number[] = [461, 463, 464];

/** True when the refusal proves the transaction can never be mined ({@link NEVER_MINABLE_CODES}). */
export function provesNeverMinable(v: Refusal): boolean {
  return v.kind === 'refused' && typeof v.code === 'number' && NEVER_MINABLE_CODES.includes(v.code);
}

/**
 * The one reading of ARC's answers (bitcoin-sv/arc `metamorph_api.proto`, `doc/errors.md`; see
 * /work/shared/research/arc.md §1): every status, error code and problem body becomes a
 * {@link BroadcastVerdict} here (`verdictOfStatus`, `verdictOfProblem`) and nowhere else —
 * submissions, status polls, re-broadcasts, callbacks, the wallet's splits (chain-arc's client
 * calls them).
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
 * client (chain-arc) throws `ArcTransientError`.
 */

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
      const complete = isHashHex(blockHash) && a.blockHeight != null && !!a.merklePath;
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
