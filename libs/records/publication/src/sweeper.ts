import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import type { RecordStore } from '@proofline/records-data-access';
import { SWEEP_DEFER_MS } from './producer';
import type { BullPublishQueue } from './producer';

export interface Sweeper {
  /** Re-enqueues outbox entries accepted more than `afterMs` ago; returns how many. */
  sweep(): Promise<number>;
  /**
   * Re-enqueues, now, every outbox entry that no live producer can be about to carry: those due
   * (accepted more than `afterMs` ago) and those deferred because a batch job carried them. Run
   * when a publisher starts and when its Redis connection comes back: the job that carried a
   * deferred entry may be stalled in a dead worker or lost with a Redis that restarted, and
   * waiting out the deferral (SWEEP_DEFER_MS) or BullMQ's stalled-job check would hold those
   * records back long after the service is ready. Entries accepted within `afterMs` are left to
   * the producer that is batching them. A record enqueued twice is published once (its second
   * job finds it published). Returns how many entries it enqueued.
   */
  resume(): Promise<number>;
  stop(): void;
}

/**
 * Whether an outbox entry due at `dueMs` is one no live producer may be about to carry, seen by a
 * resume that started at `now`: due (accepted more than `afterMs` ago), or deferred by a batch job
 * added before the resume began (due by then + SWEEP_DEFER_MS at most). An entry deferred later is
 * its producer's: a resume that takes a while (one outbox per partition) would otherwise take every
 * record written meanwhile for a stranded one.
 */
function strandedAt(dueMs: number, now: number, afterMs: number): boolean {
  return dueMs <= now - afterMs || (dueMs > now && dueMs <= now + SWEEP_DEFER_MS);
}

/** Entries one resume step reads and enqueues (a ZSCAN page, one addBulk). */
const RESUME_PAGE = 1000;

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
  // Every live partition's outbox at once (other layouts' too): a resume is one scan's time, not
  // one per partition (entries written meanwhile are the producers', which a slow resume would
  // take for stranded ones).
  const resume = async (): Promise<number> => {
    const now = o.clock.now().getTime();
    const counts = await Promise.all(
      Array.from({ length: o.store.partitions.units.length }, async (_, partition) => {
        let cursor = '0';
        let enqueued = 0;
        do {
          const page = await o.store.scanPartitionOutbox(partition, cursor, RESUME_PAGE);
          cursor = page.cursor;
          const stranded = page.entries.filter((e) => strandedAt(e.dueMs, now, o.afterMs)).map((e) => e.txId);
          await o.queue.enqueueMany(stranded);
          enqueued += stranded.length;
        } while (cursor !== '0');
        return enqueued;
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
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
  return { sweep, resume, stop: () => timer && clearInterval(timer) };
}
