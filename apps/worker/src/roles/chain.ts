import type { RoleStarter } from '../context';

/**
 * ARC confirmations: a BullMQ job scheduler every ARC_POLL_MS (one run at a time across workers)
 * polls the published but unproven transactions, stores their proofs once verified against
 * HEADERS_URL, re-broadcasts the same bytes when ARC does not know a transaction, fails records
 * ARC refused, and handles reorgs. The node mines; no worker produces blocks. Composed by
 * createPublication (@proofline/records-publication).
 */
export const chainConfirmationsRole: RoleStarter = async (ctx) => {
  const running = await ctx.publication.startConfirmations();
  return { name: 'chain-confirmations', close: () => running.close() };
};
