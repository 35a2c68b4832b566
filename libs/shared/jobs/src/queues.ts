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

/** A queue of the service (a value of {@link QUEUES}). */
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * BullMQ's key prefix of ONE queue under the deployment's Redis prefix:
 * `<redisPrefix>:{bull:<queue>}`, the form of shared-redis' `keyTag(redisPrefix, 'bull:' + queue)`.
 * BullMQ names every key of a queue `<prefix>:<queue>:<suffix>` and its scripts touch several of
 * them at once, so on a Redis Cluster all of a queue's keys must share a hash tag; one tag per
 * queue (not one for all) spreads the queues over the masters. The queue's name itself stays
 * plain, so metrics labels (`queue="records-publish"`) and the dashboard read as before. Keys:
 * `proofline:{bull:records-publish}:records-publish:wait` (was `proofline:bull:records-publish:wait`;
 * the migration table is in this lib's README).
 */
export const bullPrefix = (redisPrefix: string, queue: QueueName): string => `${bullKeyStart(redisPrefix)}${queue}}`;

/** What every BullMQ key of the deployment starts with (to tell them from the service's own keys). */
export const bullKeyStart = (redisPrefix: string): string => `${redisPrefix}:{bull:`;
