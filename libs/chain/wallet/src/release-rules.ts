/**
 * When a rejected transaction's inputs may go back to free (arc.md §3 and §6, retry rules).
 *
 * Releasing an input that is in fact spent (or may yet be spent by a transaction that is out)
 * would hand it to another write whose transaction then fails or, worse, races the first one.
 * Dropping an input that was in fact unspent only loses its satoshis until a reconcile imports
 * it again. So: release only when the transaction never reached the network AND the rejection
 * is about the transaction itself (bad script, format, outputs, fee, size), never about its inputs.
 */

/** ARC codes (and statuses) that say the transaction itself is invalid; its inputs were not consumed. */
const TX_ITSELF_INVALID = new Set(['400', '404', '460', '461', '463', '464', '465', '468', '469', '473', '474']);

export interface Rejection {
  /** ARC's HTTP/error code (`'465'`) or final status name (`'REJECTED'`, `'DOUBLE_SPEND_ATTEMPTED'`). */
  readonly code: string;
  /** ARC ever reported the transaction at ANNOUNCED_TO_NETWORK or beyond. */
  readonly reachedNetwork: boolean;
}

/**
 * True when a definitively rejected transaction's inputs may return to free. False for a
 * transaction that reached the network, for input faults (462 missing/spent inputs, 466
 * conflict, 467/475 ancestors, 471/472 frozen), for DOUBLE_SPEND_ATTEMPTED and for a bare
 * REJECTED whose reason is unknown. Ambiguous outcomes (timeouts, 5xx, 429, statuses below
 * SEEN_ON_NETWORK) are not rejections at all: never call `fail` for them.
 */
export function inputsReleasable(rejection: Rejection): boolean {
  return !rejection.reachedNetwork && TX_ITSELF_INVALID.has(rejection.code);
}
