import { createHash, randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type { Clock } from '@proofline/shared-config';
import { confirmedBlocks } from '@proofline/chain-domain';
import type { ChainPublisher, ChainReader } from '@proofline/chain-domain';
import { receiptFamily } from '@proofline/records-domain';
import type { RecordMeta } from '@proofline/records-domain';
import { recordsKeys } from '@proofline/records-data-access';
import type { RecordStore } from '@proofline/records-data-access';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { Logger } from '@proofline/shared-logger';
import type { RedisClient } from '@proofline/shared-redis';
import type { WebhookStore } from '@proofline/webhooks-data-access';
import {
  DEFAULT_DELIVERY_RETRY,
  WEBHOOK_DELIVERY_JOB,
  deliveryJobId,
  deliveryJobOptions,
} from '@proofline/webhooks-domain';
import type { DeliveryRetryPolicy, StoredWebhook, WebhookDeliveryJob, WebhookEvent } from '@proofline/webhooks-domain';

// The watch set, from both ends: a record enters it before its transaction is submitted
// (watchPublications, around the records publisher) and leaves it once the watcher has turned it
// into deliveries (WebhookWatcher, startWebhookWatcher).

/**
 * Wraps the records publisher's {@link ChainPublisher} (any chain) so that every record of a
 * tenant with webhooks enters the watch set BEFORE its transaction is submitted: it cannot be
 * confirmed unseen, and a failed watch (Redis down) fails the attempt, which BullMQ retries. One
 * extra script call per publication; a tenant without webhooks adds nothing else. The record's
 * tenant comes with the submission (the publisher read the record); a caller that does not pass
 * it costs one more round trip (the record's `tenant` field), as records and webhooks live under
 * different hash tags and no script reads both.
 */
export function watchPublications(
  publisher: ChainPublisher,
  deps: { store: Pick<WebhookStore, 'watchRecord' | 'recordTenant'>; prefix: string; clock: Clock },
): ChainPublisher {
  const keys = recordsKeys(deps.prefix);
  return {
    async submit(tx) {
      const tenant = tx.tenant ?? (await deps.store.recordTenant(keys.record(tx.txId)));
      if (tenant) await deps.store.watchRecord(tenant, tx.txId, deps.clock.now());
      return publisher.submit(tx);
    },
  };
}

/** The delivery queue of the webhooks scope (jobId = {@link deliveryJobId}). */
export function webhookDeliveryQueue(connection: RedisClient, prefix: string): Queue {
  return new Queue(QUEUES.webhooksDeliver, { connection, prefix: bullPrefix(prefix, QUEUES.webhooksDeliver) });
}

/** `webhook-id` of the message for one webhook, txId and event: the same on every retry and re-enqueue. */
export function messageIdOf(jobId: string): string {
  return `msg_${createHash('sha256').update(jobId).digest('base64url').slice(0, 32)}`;
}

export interface WebhookWatcherDeps {
  readonly webhooks: WebhookStore;
  readonly records: Pick<RecordStore, 'metaMany'>;
  readonly reader: ChainReader;
  readonly deliveries: Pick<Queue, 'addBulk'>;
  readonly clock: Clock;
  readonly retry?: DeliveryRetryPolicy;
  /** How long a watched, unconfirmed record waits before the next look (default 1 s). */
  readonly recheckMs?: number;
  /** txIds read per batch (default 500). */
  readonly batch?: number;
}

/**
 * Turns watched records into deliveries: reads due txIds of the watch set in batches, asks
 * {@link ChainReader.inclusions} (any chain), and enqueues `record.confirmed` (proof available)
 * or `record.failed` (publication failed for good) for every webhook of the record's tenant that
 * subscribes to the event. Only then are those txIds dropped from the set: the set is the source
 * of truth until the delivery jobs exist, and their deterministic jobIds make a repeat harmless.
 */
export class WebhookWatcher {
  constructor(private readonly deps: WebhookWatcherDeps) {}

  /** One pass over due txIds (up to 10 batches); returns how many were settled (delivered or dropped). */
  async tick(): Promise<number> {
    let settled = 0;
    for (let round = 0; round < 10; round++) {
      const { settled: n, more } = await this.batch();
      settled += n;
      if (!more) break;
    }
    return settled;
  }

  private async batch(): Promise<{ settled: number; more: boolean }> {
    const { webhooks, records, reader, clock } = this.deps;
    const size = this.deps.batch ?? 500;
    const now = clock.now();
    const due = await webhooks.dueWatched(now, size);
    if (due.length === 0) return { settled: 0, more: false };
    const [metas, inclusions, tip] = await Promise.all([
      records.metaMany(due),
      reader.inclusions(due),
      reader.tipHeight(),
    ]);
    const hooksOf = new Map<string, Promise<StoredWebhook[]>>();
    const jobs: {
      name: string;
      data: WebhookDeliveryJob;
      opts: ReturnType<typeof deliveryJobOptions> & { jobId: string };
    }[] = [];
    const settled: string[] = [];
    const pending: string[] = [];
    const successors: string[] = [];
    const opts = deliveryJobOptions(this.deps.retry ?? DEFAULT_DELIVERY_RETRY);
    for (const [i, txId] of due.entries()) {
      const meta = metas[i] ?? null;
      const inclusion = inclusions[i] ?? null;
      if (!meta) {
        settled.push(txId);
        continue;
      }
      let event: WebhookEvent;
      let confirmation: unknown = null;
      if (inclusion?.proof) {
        event = 'record.confirmed';
        confirmation = {
          confirmedBlocks: confirmedBlocks(tip, inclusion.blockHeight),
          blockHash: inclusion.blockHash,
          blockTimestamp: inclusion.blockTime.toISOString(),
          merkleProof: inclusion.proof,
        };
      } else if (meta.state === 'failed') {
        event = 'record.failed';
        // Its successors fail with it (the publisher marks them) without ever being submitted.
        if (meta.nextTxId) successors.push(meta.nextTxId);
      } else {
        pending.push(txId);
        continue;
      }
      let hooks = hooksOf.get(meta.tenant);
      if (!hooks) hooksOf.set(meta.tenant, (hooks = webhooks.list(meta.tenant)));
      for (const hook of await hooks) {
        if (!hook.events.includes(event)) continue;
        jobs.push(deliveryJob(hook.id, meta, event, confirmation, now, opts));
      }
      settled.push(txId);
    }
    // MUST exist before the txIds leave the set (a crash in between re-enqueues the same jobIds).
    if (jobs.length > 0) await this.deps.deliveries.addBulk(jobs);
    await webhooks.watch(successors, now);
    await webhooks.unwatch(settled);
    await webhooks.rewatch(pending, new Date(now.getTime() + (this.deps.recheckMs ?? 1000)));
    return { settled: settled.length, more: due.length === size };
  }
}

function deliveryJob(
  webhookId: string,
  meta: RecordMeta,
  event: WebhookEvent,
  confirmation: unknown,
  at: Date,
  opts: ReturnType<typeof deliveryJobOptions>,
) {
  const jobId = deliveryJobId(webhookId, meta.txId, event);
  const body = JSON.stringify({
    type: event,
    timestamp: at.toISOString(),
    data: { txId: meta.txId, family: receiptFamily(meta.family), confirmation },
  });
  const data: WebhookDeliveryJob = { webhookId, messageId: messageIdOf(jobId), event, txId: meta.txId, body };
  return { name: WEBHOOK_DELIVERY_JOB, data, opts: { ...opts, jobId } };
}

/** The watcher's job scheduler id: one per deployment however many workers upsert it. */
export const WEBHOOK_WATCH_SCHEDULER_ID = 'webhook-watcher';

export interface WebhookWatcherOptions extends Omit<WebhookWatcherDeps, 'deliveries'> {
  /** The app's BullMQ connection (shared, not closed). */
  readonly connection: RedisClient;
  /** The app's command connection (the run lock). */
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly everyMs?: number;
  readonly logger?: Logger;
}

export interface RunningWebhookWatcher {
  /** Runs one pass now (tests; also what each scheduled tick does). */
  tick(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Runs the watcher every `everyMs` (default 1 s) as a BullMQ job scheduler with a concurrency-1
 * worker in every process, plus a Redis lock, so one pass runs at a time across all workers.
 */
export async function startWebhookWatcher(o: WebhookWatcherOptions): Promise<RunningWebhookWatcher> {
  const prefix = bullPrefix(o.prefix, QUEUES.webhooksWatch);
  const deliveries = webhookDeliveryQueue(o.connection, o.prefix);
  const watcher = new WebhookWatcher({ ...o, deliveries });
  const lockKey = o.webhooks.keys.watchLock;
  const tick = async (): Promise<number> => {
    const token = randomUUID();
    if ((await o.redis.set(lockKey, token, 'PX', 30_000, 'NX')) !== 'OK') return 0;
    try {
      return await watcher.tick();
    } finally {
      await o.redis.eval(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
        1,
        lockKey,
        token,
      );
    }
  };
  const queue = new Queue(QUEUES.webhooksWatch, { connection: o.connection, prefix });
  await queue.upsertJobScheduler(
    WEBHOOK_WATCH_SCHEDULER_ID,
    { every: o.everyMs ?? 1000 },
    { name: 'watch', data: {}, opts: { removeOnComplete: 10, removeOnFail: 100, attempts: 1 } },
  );
  const worker = new Worker(QUEUES.webhooksWatch, () => tick(), { connection: o.connection, prefix, concurrency: 1 });
  worker.on('failed', (_job, err) => o.logger?.warn({ err: err.message }, 'webhook watcher pass failed'));
  worker.on('error', (err) => o.logger?.warn({ err: err.message }, 'webhook watcher error'));
  await worker.waitUntilReady();
  return {
    tick,
    close: async () => {
      await worker.close();
      await queue.close();
      await deliveries.close();
    },
  };
}
