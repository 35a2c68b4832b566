import { NEVER_MINABLE_CODES } from '@proofline/chain-domain';

/**
 * When a rejected transaction's inputs may go back to free (arc.md §3 and §6, retry rules).
 *
 * Releasing an input that is in fact spent (or may yet be spent by a transaction that is out)
 * would hand it to another write whose transaction then fails or, worse, races the first one.
 * Dropping an input that was in fact unspent only loses its satoshis until a reconcile imports
 * it again. So: release only when the refusal proves the transaction can never be mined, by any
 * node, whatever else was broadcast: its script fails (461), it is malformed (463), its outputs
 * are invalid (464). A refusal that depends on this ARC or this moment does not prove it: 460
 * (parents not found yet: an earlier or later send may pass), 465/473 (another miner's fee
 * policy), 474 (size policy), 468/469 (the BEEF, not the transaction), 400/404 (the request).
 * Any broadcast of such a transaction may still be mined, so its inputs stay spent.
 */

/** ARC codes that prove the transaction can never be mined; its inputs were not consumed. */
const NEVER_MINABLE = new Set(NEVER_MINABLE_CODES.map(String));

export interface Rejection {
  /** ARC's HTTP/error code (`'465'`) or final status name (`'REJECTED'`, `'DOUBLE_SPEND_ATTEMPTED'`). */
  readonly code: string;
  /** ARC ever reported the transaction at ANNOUNCED_TO_NETWORK or beyond. */
  readonly reachedNetwork: boolean;
}

/**
 * True when a rejected transaction's inputs may return to free: it never reached the network and
 * ARC's code proves it can never be mined (461, 463, 464). False for a transaction that reached
 * the network, for input faults (462 missing/spent inputs, 466 conflict, 467/475 ancestors,
 * 471/472 frozen), for policy refusals (460, 465, 473, 474), DOUBLE_SPEND_ATTEMPTED and REJECTED.
 * Ambiguous outcomes (timeouts, 5xx, 429, statuses below SEEN_ON_NETWORK) are not rejections at
 * all: never call `fail` for them.
 */
export function inputsReleasable(rejection: Rejection): boolean {
  return !rejection.reachedNetwork && NEVER_MINABLE.has(rejection.code);
}
