/**
 * Every BullMQ queue of the service, in one place. Job ids are deterministic (a txId, a key id,
 * a block height) so that enqueueing is idempotent; ids MUST NOT contain ':'.
 */
export const QUEUES = {
  /** Identity key commands that must hold the per-tenant limit atomically (key worker). */
  identityKeys: 'identity-keys',
  /** Publication of accepted record transactions to the chain (publisher). */
  recordsPublish: 'records-publish',
  /**
   * The devnet block producer's repeatable tick (one at a time across all workers). It also
   * builds every Merkle proof of the block in one pass and stores them in the block's atomic
   * commit, so proofs need no queue of their own.
   */
  chainBlocks: 'chain-blocks',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** BullMQ's key prefix under the deployment's Redis prefix. */
export const bullPrefix = (redisPrefix: string): string => `${redisPrefix}:bull`;
