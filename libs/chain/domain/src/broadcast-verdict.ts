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
 * answer, built in one place (`verdictOf…` in @proofline/chain-arc) and read by the publisher,
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
