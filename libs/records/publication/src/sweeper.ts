import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import type { RecordStore } from '@proofline/records-data-access';
import type { BullPublishQueue } from './producer';

export interface Sweeper {
  /** Re-enqueues outbox entries accepted more than `afterMs` ago; returns how many. */
  sweep(): Promise<number>;
  stop(): void;
}

/**
 * The outbox sweeper (the transactional outbox): a write whose enqueue was lost (the API died
 * after the accept script, a batch job lost) is enqueued again here, one job per record with
 * jobId = txId, so running it on every worker at once stays idempotent. `everyMs` 0: no timer
 * (tests call `sweep()`); one sweep at a time per process.
 */
export function startSweeper(o: {
  store: RecordStore;
  queue: Pick<BullPublishQueue, 'enqueueMany'>;
  clock: Clock;
  logger: Logger;
  afterMs: number;
  everyMs: number;
}): Sweeper {
  const sweep = async (): Promise<number> => {
    const due = await o.store.dueOutbox(new Date(o.clock.now().getTime() - o.afterMs));
    await o.queue.enqueueMany(due);
    return due.length;
  };
  let sweeping = false;
  const timer =
    o.everyMs > 0
      ? setInterval(() => {
          if (sweeping) return;
          sweeping = true;
          sweep()
            .catch((err: unknown) =>
              o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'outbox sweep failed'),
            )
            .finally(() => {
              sweeping = false;
            });
        }, o.everyMs)
      : null;
  timer?.unref();
  return { sweep, stop: () => timer && clearInterval(timer) };
}
