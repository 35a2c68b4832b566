import type { ReplyTable } from '@proofline/shared-redis';
import type { AcceptOutcome } from './record-store';

/** The records scripts' reply tables (mapped with `fromScriptReply` from shared-redis). */

/** `accept-root-14.lua` and `accept-successor-16.lua`. */
export const ACCEPT_REPLIES: { readonly [K in AcceptOutcome]: K } = {
  OK: 'OK',
  /** The txId is already stored (nothing changed). */
  EXISTS: 'EXISTS',
  TX_NOT_FOUND: 'TX_NOT_FOUND',
  WRONG_FAMILY: 'WRONG_FAMILY',
  TOKEN_INVALID: 'TOKEN_INVALID',
  FORBIDDEN: 'FORBIDDEN',
  NOT_END: 'NOT_END',
  /** The chain already holds MAX_UNCONFIRMED_LINKS unconfirmed versions. */
  CHAIN_DEPTH: 'CHAIN_DEPTH',
  /** The previous record's chainId is not the one read before the script ran. */
  CHAIN_MISMATCH: 'CHAIN_MISMATCH',
  BACKPRESSURE: 'BACKPRESSURE',
  /** A funding input's lease expired before the script ran (the pool's commit contract): build again. */
  LEASE_LOST: 'LEASE_LOST',
  /** A funding input taken straight from free is not free any more (another writer has it): build again. */
  TAKEN: 'TAKEN',
};

/** `navigate-2.lua`: its first reply element. */
export const NAVIGATE_REPLIES: ReplyTable<'OK' | 'TX_NOT_FOUND' | 'WRONG_FAMILY'> = {
  OK: 'OK',
  TX_NOT_FOUND: 'TX_NOT_FOUND',
  WRONG_FAMILY: 'WRONG_FAMILY',
};

/** `settle-3.lua`'s first reply element: 1 when the state changed, 0 when already settled or unknown. */
export const SETTLE_REPLIES: ReplyTable<boolean> = { '1': true, '0': false };
