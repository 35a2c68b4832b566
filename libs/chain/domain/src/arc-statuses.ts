/**
 * ARC's transaction statuses (bitcoin-sv/arc `metamorph_api.proto`), shared by the ARC client
 * (chain-arc) and the devnet node that speaks ARC's API (libs/devnet): one list, so the two
 * sides of the wire cannot disagree.
 */

/** Every status ARC reports, with its numeric order (a higher one is further along). */
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
