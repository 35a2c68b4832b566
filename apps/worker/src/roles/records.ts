import type { RoleStarter } from '../context';

/**
 * The records publisher: submits accepted record transactions to ARC (concurrent jobs of this
 * process coalesced into `POST /v1/txs`), settles their funding and watches them for a proof;
 * plus the outbox sweeper. Composed by createPublication (@proofline/records-publication).
 */
export const recordsPublishRole: RoleStarter = async (ctx) => {
  const running = ctx.publication.startPublisher();
  return { name: 'records-publish', close: () => running.close() };
};
