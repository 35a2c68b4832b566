import { Queue, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { arcKeys } from '@proofline/chain-arc';
import { readPublicationPause } from '@proofline/records-publication';
import type { RedisClient } from '@proofline/shared-redis';

/**
 * Prometheus metrics of one worker process, served on `WORKER_METRICS_PORT`:
 * - `proofline_worker_jobs_total{queue,outcome}`: jobs this process finished (`completed`,
 *   `failed`: an attempt that threw, retried or not);
 * - `proofline_worker_job_duration_seconds{queue,outcome}`: processing time of each attempt
 *   (BullMQ's processedOn → finishedOn);
 * - `proofline_worker_jobs_active{queue}`: attempts running now in this process;
 * - `proofline_queue_jobs{queue,state}`: the queues' job counts in Redis (every process, read at
 *   scrape: waiting, active, delayed, failed);
 * - `proofline_publication_paused`: 1 while publication is paused because the chain service
 *   refused the request itself (a wrong ARC_CALLBACK_URL, an unknown X-WaitFor; read at scrape,
 *   shared by every process), else 0;
 * - `proofline_arc_orphans_escalated`: record transactions the confirmation pass escalated for
 *   staying SEEN_IN_ORPHAN_MEMPOOL past ARC_ORPHAN_MAX_BLOCKS, since the deployment started;
 * - process metrics (`proofline_process_*`, `proofline_nodejs_*`).
 *
 * Why the BullMQ Worker prototype is observed instead of each role's workers: the roles create
 * their BullMQ workers inside the feature libs (publisher, block producer, key worker) and do not
 * expose them; observing `Worker.prototype.emit` once covers every worker this process creates,
 * present and future, without changing a lib. It only reads the events BullMQ emits anyway.
 */
export interface WorkerMetrics {
  readonly registry: Registry;
  /** Closes the read-only queue handles used for job counts. */
  close(): Promise<void>;
}

let observed: ((queue: string, event: string, job: unknown) => void) | undefined;

function observeWorkers(): void {
  if (observed !== undefined) return;
  const proto = Worker.prototype as unknown as {
    emit(this: Worker, event: string | symbol, ...args: unknown[]): boolean;
  };
  const emit = proto.emit;
  // Only the events BullMQ emits itself; the original emit runs unchanged first.
  proto.emit = function (this: Worker, event: string | symbol, ...args: unknown[]): boolean {
    const handled = emit.call(this, event, ...args);
    if (typeof event === 'string' && (event === 'active' || event === 'completed' || event === 'failed'))
      observed?.(this.name, event, args[0]);
    return handled;
  };
  observed = () => undefined;
}

/** `bull`: a bounded connection (request-path options) for the scrape-time job counts. */
export function createWorkerMetrics(o: { readonly bull: RedisClient; readonly redisPrefix: string }): WorkerMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ app: 'proofline-worker' });
  collectDefaultMetrics({ register: registry, prefix: 'proofline_' });
  const jobs = new Counter({
    name: 'proofline_worker_jobs_total',
    help: 'Jobs this worker process finished, by queue and outcome.',
    labelNames: ['queue', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'proofline_worker_job_duration_seconds',
    help: 'Processing time of each job attempt in this worker process, by queue and outcome.',
    labelNames: ['queue', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const active = new Gauge({
    name: 'proofline_worker_jobs_active',
    help: 'Job attempts running now in this worker process, by queue.',
    labelNames: ['queue'] as const,
    registers: [registry],
  });
  // Observers only: skipMetasUpdate keeps each queue's meta (its event-stream cap) as its owner set it.
  const queues = Object.values(QUEUES).map(
    (name) => new Queue(name, { connection: o.bull, prefix: bullPrefix(o.redisPrefix, name), skipMetasUpdate: true }),
  );
  for (const q of queues) q.on('error', () => undefined);
  new Gauge({
    name: 'proofline_queue_jobs',
    help: 'BullMQ jobs per queue and state (in Redis, all processes).',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const counts = await Promise.all(
        queues.map(async (q) => [q.name, await q.getJobCounts('waiting', 'active', 'delayed', 'failed')] as const),
      );
      for (const [queue, byState] of counts)
        for (const [state, n] of Object.entries(byState)) this.set({ queue, state }, n);
    },
  });
  for (const queue of Object.values(QUEUES)) active.set({ queue }, 0);
  new Gauge({
    name: 'proofline_publication_paused',
    help: 'Publication paused: 1 while the chain service answers request problems (records wait in the outbox).',
    registers: [registry],
    async collect() {
      this.set((await readPublicationPause(o.bull, o.redisPrefix)) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'proofline_arc_orphans_escalated',
    help: 'Record transactions escalated for staying SEEN_IN_ORPHAN_MEMPOOL past ARC_ORPHAN_MAX_BLOCKS, since the deployment started.',
    registers: [registry],
    async collect() {
      this.set(Number((await o.bull.get(arcKeys(o.redisPrefix).orphanEscalations)) ?? 0));
    },
  });

  observeWorkers();
  // Start of each running attempt (queue + job id): durations measured here, whatever BullMQ
  // records (a retried attempt has no finishedOn).
  const started = new Map<string, number>();
  observed = (queue, event, job) => {
    const id = (job as Partial<Pick<Job, 'id'>> | undefined)?.id;
    const key = `${queue}\u0000${id ?? ''}`;
    if (event === 'active') {
      started.set(key, performance.now());
      active.inc({ queue });
      return;
    }
    const outcome = event === 'completed' ? 'completed' : 'failed';
    jobs.inc({ queue, outcome });
    const t0 = started.get(key);
    if (t0 === undefined) return;
    started.delete(key);
    active.dec({ queue });
    duration.observe({ queue, outcome }, (performance.now() - t0) / 1000);
  };
  return {
    registry,
    close: async () => {
      observed = () => undefined;
      await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
    },
  };
}
