import type { ReplyTable } from '@proofline/shared-redis';

/** The devnet scripts' reply tables (first reply element; mapped with `fromScriptReply` from shared-redis). */

/** `commit-block-9.lua` (DevnetBlockProducer.commitBlock): the tip or the mempool moved = stale. */
export const COMMIT_BLOCK_REPLIES: ReplyTable<'committed' | 'stale'> = {
  OK: 'committed',
  STALE_TIP: 'stale',
  NOT_IN_MEMPOOL: 'stale',
};

/** `node-accept-7.lua` (the devnet node's mempool door). */
export const NODE_ACCEPT_REPLIES: ReplyTable<
  'accepted' | 'known' | 'DOUBLE_SPEND' | 'SPENT_IN_BLOCK' | 'MISSING_INPUT' | 'IMMATURE'
> = {
  accepted: 'accepted',
  known: 'known',
  DOUBLE_SPEND: 'DOUBLE_SPEND',
  SPENT_IN_BLOCK: 'SPENT_IN_BLOCK',
  MISSING_INPUT: 'MISSING_INPUT',
  IMMATURE: 'IMMATURE',
};

/** `reorg-tip-8.lua` (DevnetNode.reorgLastBlock). */
export const REORG_TIP_REPLIES: ReplyTable<'committed' | 'stale'> = {
  OK: 'committed',
  STALE_TIP: 'stale',
};
