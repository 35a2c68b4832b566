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
   * ARC confirmations: a job scheduler every ARC_POLL_MS; each run polls the published but
   * unproven transactions, verifies and stores their proofs, and handles reorgs (one run at a
   * time across all workers).
   */
  chainConfirmations: 'chain-confirmations',
  /**
   * The funding wallet's upkeep (sweep expired leases, import devnet coinbases, split to the
   * low-water mark): a job scheduler every 30 s plus on-demand runs when a write finds the pool
   * empty (chain-wallet `startWalletUpkeepWorker`, `WalletUpkeepRequester`).
   */
  walletUpkeep: 'wallet-upkeep',
  /**
   * ARC status callbacks the API accepted, proven by the worker's arc-callbacks role (jobId = the
   * SHA-256 of the parsed batch: a batch delivered twice while queued is one job).
   */
  arcCallbacks: 'arc-callbacks',
  /** Signed webhook deliveries (jobId = webhook id + txId + event: one delivery per event and webhook). */
  webhooksDeliver: 'webhooks-deliver',
  /** The webhook watcher's tick (a job scheduler): turns watched txIds into deliveries once confirmed or failed. */
  webhooksWatch: 'webhooks-watch',
} as const;

/** BullMQ's key prefix under the deployment's Redis prefix. */
export const bullPrefix = (redisPrefix: string): string => `${redisPrefix}:bull`;
