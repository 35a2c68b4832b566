import { z } from 'zod';

/**
 * The devnet block producer's job scheduler on the chain-blocks queue: BullMQ keeps one scheduler
 * per id, so every worker process upserting it still yields one tick per BLOCK_INTERVAL_MS.
 */
export const CHAIN_BLOCK_SCHEDULER_ID = 'devnet-block-producer';

/** Job name of a producer tick. */
export const CHAIN_BLOCK_JOB = 'produce-block';

/** Payload of a producer tick: nothing; the header time comes from the worker's clock. */
export const chainBlockJob = z.strictObject({});
export type ChainBlockJob = z.output<typeof chainBlockJob>;

/** What a producer tick returns (BullMQ's returnvalue). */
export const chainBlockResult = z.union([
  z.strictObject({
    status: z.literal('produced'),
    hash: z.string(),
    height: z.number().int().nonnegative(),
    txCount: z.number().int().positive(),
  }),
  z.strictObject({ status: z.literal('stale'), reason: z.string() }),
]);
export type ChainBlockResult = z.output<typeof chainBlockResult>;

/** Options of the producer tick (set on the scheduler's job template). */
export const CHAIN_BLOCK_JOB_OPTIONS = { removeOnComplete: 100, removeOnFail: 100, attempts: 1 } as const;
