import type { RedisClient } from '@proofline/shared-redis';
import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import { ARC_STATUSES } from '@proofline/chain-domain';
import { callbackBody } from './arc-protocol';
import type { TxStatusRecord } from './arc-protocol';
import { LENIENT_ARC } from './arc-settings';
import type { ArcStrictness } from './arc-settings';
import { devnetCommands } from '../commands';
import type { DevnetCommands } from '../commands';
import type { DevnetKeys } from '../keys';

/** Where and how to report a transaction's status changes (from the submission's X-Callback* headers). */
export interface CallbackRegistration {
  readonly url: string;
  /** Sent as `Authorization: Bearer <token>`; empty: no Authorization header. */
  readonly token: string;
  /** X-CallbackBatch: deliver as `{count, callbacks:[…]}`. */
  readonly batch: boolean;
  /** X-FullStatusUpdates: also report SEEN_ON_NETWORK, not only statuses ≥ REJECTED. */
  readonly full: boolean;
}

/** One queued delivery (stored as JSON in the callback queue ZSET). */
interface Delivery {
  readonly id: number;
  readonly url: string;
  readonly token: string;
  readonly batch: boolean;
  readonly attempt: number;
  readonly payload: Record<string, unknown>;
}

export interface CallbackFaults {
  readonly dropCallbacks: boolean;
  readonly duplicateCallbacks: boolean;
}

export interface CallbackerOptions {
  readonly redis: RedisClient;
  readonly keys: DevnetKeys;
  readonly clock: Clock;
  readonly faults: CallbackFaults;
  readonly logger?: Logger;
  /** Batch size, network-error retries, DSA callbacks, attempts: read on every pass (default LENIENT_ARC). */
  readonly strictness?: ArcStrictness;
  /** Attempts per delivery before it is dropped (default `strictness.callbackMaxAttempts`). */
  readonly maxAttempts?: number;
  /** First retry delay; doubles per attempt (default 250 ms). */
  readonly retryBaseMs?: number;
  /** Per-request deadline (default 5000 ms, as ARC). */
  readonly timeoutMs?: number;
  /** Queue poll period (default 100 ms). */
  readonly pollMs?: number;
  /** How long a claimed delivery stays invisible to other claimers (default 30 s). */
  readonly leaseMs?: number;
}

/** How a POST ended: answered 2xx, answered otherwise, or no answer (refused, reset, timed out). */
type SendResult = 'ok' | 'status' | 'network';

/**
 * ARC-style callbacks, durable in Redis: registrations per txId (HASH), and a delivery queue
 * (ZSET scored by due time) that survives a restart of the node. A delivery is claimed with a
 * lease (`callback-claim-1.lua`: two node processes never send the same one at once, and one
 * that dies mid-send leaves it to be claimed again), POSTed with the Bearer token, removed once
 * answered 2xx, and re-queued with exponential backoff on a non-2xx answer (and on a network
 * error unless `strictness.callbackRetryOnNetworkError` is off, as in ARC), up to `maxAttempts`:
 * at-least-once delivery, as receivers must be idempotent anyway. Batch registrations are
 * flushed as `{count, callbacks}` (≤ `strictness.callbackBatchMax`) on every poll of the queue;
 * one receiver URL gets one request at a time, in queue order.
 */
export class Callbacker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;
  private readonly maxAttempts: number | undefined;
  private readonly retryBaseMs: number;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly commands: DevnetCommands;

  constructor(private readonly o: CallbackerOptions) {
    this.commands = devnetCommands(o.redis);
    this.leaseMs = o.leaseMs ?? 30_000;
    this.maxAttempts = o.maxAttempts;
    this.retryBaseMs = o.retryBaseMs ?? 250;
    this.timeoutMs = o.timeoutMs ?? 5000;
  }

  /** Starts polling the queue. */
  start(): void {
    this.timer = setInterval(() => this.kick(), this.o.pollMs ?? 100);
  }

  /** Stops polling and waits for an in-flight pass. Queued deliveries stay in Redis. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /**
   * Adds the registration `reg` to each txId (deduplicated by url and token), in two commands
   * for the batch (HMGET, HSET). Per txId: `isNew` (false when it was there already; true for a
   * re-submission with a new callback URL) and all its registrations after this one (for
   * {@link notifyEach}).
   */
  async registerMany(
    txIds: readonly string[],
    reg: CallbackRegistration,
  ): Promise<{ readonly isNew: boolean; readonly all: readonly CallbackRegistration[] }[]> {
    if (txIds.length === 0) return [];
    const raws = await this.o.redis.hmget(this.o.keys.callbacks, ...txIds);
    const current = new Map<string, CallbackRegistration[]>();
    const changed = new Map<string, string>();
    const out = txIds.map((txId, i) => {
      const raw = raws[i];
      const regs = current.get(txId) ?? (raw ? (JSON.parse(raw) as CallbackRegistration[]) : []);
      if (regs.some((r) => r.url === reg.url && r.token === reg.token)) {
        current.set(txId, regs);
        return { isNew: false, all: regs };
      }
      const all = [...regs, reg];
      current.set(txId, all);
      changed.set(txId, JSON.stringify(all));
      return { isNew: true, all };
    });
    if (changed.size > 0) await this.o.redis.hset(this.o.keys.callbacks, ...[...changed].flat());
    return out;
  }

  async registrations(txId: string): Promise<CallbackRegistration[]> {
    const raw = await this.o.redis.hget(this.o.keys.callbacks, txId);
    return raw ? (JSON.parse(raw) as CallbackRegistration[]) : [];
  }

  private get strictness(): ArcStrictness {
    return this.o.strictness ?? LENIENT_ARC;
  }

  /**
   * Queues the callbacks that `record` triggers for every registration of its txId (MINED and
   * REJECTED always, DOUBLE_SPEND_ATTEMPTED always unless strict, as ARC; lower statuses only
   * with X-FullStatusUpdates).
   * `only` restricts it to one registration (a new one on a re-submission).
   */
  async notify(record: TxStatusRecord, only?: CallbackRegistration): Promise<number> {
    return this.notifyEach([{ record, regs: only ? [only] : await this.registrations(record.txid) }]);
  }

  /** Queues notifications for many txIds (a mined block): one registrations read. */
  async notifyMany(records: readonly TxStatusRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    const raws = await this.o.redis.hmget(this.o.keys.callbacks, ...records.map((r) => r.txid));
    return this.notifyEach(
      records.flatMap((record, i) => {
        const raw = raws[i];
        return raw ? [{ record, regs: JSON.parse(raw) as CallbackRegistration[] }] : [];
      }),
    );
  }

  /**
   * Queues what each record's status triggers for the given registrations, in one INCRBY and one
   * ZADD; an item with `dueAtMs` (a status reached later) is delivered from then on.
   */
  async notifyEach(
    items: readonly {
      readonly record: TxStatusRecord;
      readonly regs: readonly CallbackRegistration[];
      readonly dueAtMs?: number;
    }[],
  ): Promise<number> {
    const now = this.o.clock.now();
    const at = Date.now();
    const plain = this.strictness.doubleSpendCallbackNeedsFullStatusUpdates
      ? ARC_STATUSES.REJECTED
      : ARC_STATUSES.DOUBLE_SPEND_ATTEMPTED;
    const deliveries: { d: Omit<Delivery, 'id'>; dueAtMs: number }[] = [];
    for (const { record, regs, dueAtMs } of items) {
      const rank = ARC_STATUSES[record.txStatus];
      const due = regs.filter((r) => rank >= (r.full ? ARC_STATUSES.SEEN_IN_ORPHAN_MEMPOOL : plain));
      if (due.length === 0) continue;
      const payload = callbackBody(record, dueAtMs === undefined ? now : new Date(dueAtMs));
      for (const r of due)
        deliveries.push({
          d: { url: r.url, token: r.token, batch: r.batch, attempt: 0, payload },
          dueAtMs: dueAtMs ?? at,
        });
    }
    if (deliveries.length === 0) return 0;
    await this.enqueue(deliveries);
    this.kick();
    return deliveries.length;
  }

  /** Adds deliveries to the queue: ids from one INCRBY, members in one ZADD. */
  private async enqueue(
    items: readonly { readonly d: Omit<Delivery, 'id'>; readonly dueAtMs: number }[],
  ): Promise<void> {
    if (items.length === 0) return;
    const last = await this.o.redis.incrby(this.o.keys.callbackSeq, items.length);
    const first = last - items.length + 1;
    await this.o.redis.zadd(
      this.o.keys.callbackQueue,
      ...items.flatMap(({ d, dueAtMs }, i) => [dueAtMs, JSON.stringify({ ...d, id: first + i })]),
    );
  }

  /** Runs one delivery pass unless one is running. */
  kick(): void {
    if (this.running || this.closed) return;
    this.running = this.deliverDue()
      .catch((e: unknown) => this.o.logger?.warn({ err: e }, 'callback delivery pass failed'))
      .finally(() => {
        this.running = null;
      });
  }

  /** Delivers every due callback once (exposed for tests). */
  async deliverDue(): Promise<void> {
    const now = Date.now();
    const members = await this.commands.callbackClaim(
      this.o.keys.callbackQueue,
      String(now),
      String(now + this.leaseMs),
      '500',
    );
    if (members.length === 0) return;
    const claimed = members.map((m) => ({ member: m, d: JSON.parse(m) as Delivery }));
    if (this.o.faults.dropCallbacks) {
      await this.o.redis.zrem(this.o.keys.callbackQueue, ...members);
      this.o.logger?.info({ dropped: claimed.length }, 'fault: callbacks dropped');
      return;
    }
    // One receiver gets one request at a time (receivers verify proofs synchronously: a burst of
    // parallel batches after a block stalls their other work); different receivers in parallel.
    // After a failed request the receiver's other deliveries of this pass are not attempted: they
    // count a failed attempt and wait for their backoff, so one dead receiver costs one timeout.
    type Items = readonly (typeof claimed)[number][];
    const byUrl = new Map<string, { token: string; body: Record<string, unknown>; items: Items }[]>();
    const queueSend = (url: string, token: string, body: Record<string, unknown>, items: Items) =>
      byUrl.set(url, [...(byUrl.get(url) ?? []), { token, body, items }]);
    for (const c of claimed.filter((x) => !x.d.batch)) queueSend(c.d.url, c.d.token, c.d.payload, [c]);
    const groups = new Map<string, typeof claimed>();
    for (const c of claimed.filter((x) => x.d.batch)) {
      const key = `${c.d.url}\n${c.d.token}`;
      groups.set(key, [...(groups.get(key) ?? []), c]);
    }
    const batchMax = this.strictness.callbackBatchMax;
    for (const group of groups.values()) {
      for (let i = 0; i < group.length; i += batchMax) {
        const chunk = group.slice(i, i + batchMax);
        const first = (chunk[0] as (typeof claimed)[number]).d;
        queueSend(first.url, first.token, { count: chunk.length, callbacks: chunk.map((c) => c.d.payload) }, chunk);
      }
    }
    await Promise.all(
      [...byUrl].map(async ([url, sends]) => {
        let ok = true;
        for (const { token, body, items } of sends) {
          if (ok) ok = await this.send(url, token, body, items);
          else await this.settle(items, 'status');
        }
      }),
    );
  }

  /** POSTs one request; settles its deliveries. True when the receiver answered 2xx. */
  private async send(
    url: string,
    token: string,
    body: Record<string, unknown>,
    items: readonly { member: string; d: Delivery }[],
  ): Promise<boolean> {
    const times = this.o.faults.duplicateCallbacks ? 2 : 1;
    let result: SendResult = 'ok';
    for (let t = 0; t < times; t++) {
      const r = await this.post(url, token, body);
      if (result === 'ok') result = r;
    }
    await this.settle(items, result);
    return result === 'ok';
  }

  /**
   * Removes claimed deliveries: done when answered 2xx, else re-queued with backoff (or given up
   * after maxAttempts, or at once after a network error when those are not retried).
   */
  private async settle(items: readonly { member: string; d: Delivery }[], result: SendResult): Promise<void> {
    const { callbackRetryOnNetworkError, callbackMaxAttempts } = this.strictness;
    const maxAttempts = this.maxAttempts ?? callbackMaxAttempts;
    if (result === 'network' && !callbackRetryOnNetworkError)
      this.o.logger?.warn({ callbacks: items.length }, 'callback not delivered (network error, not retried, as ARC)');
    // Re-queue (a new member: the attempt count is part of it) before removing the claimed ones.
    else if (result !== 'ok') {
      const retries: { d: Omit<Delivery, 'id'>; dueAtMs: number }[] = [];
      for (const { d } of items) {
        const attempt = d.attempt + 1;
        if (attempt < maxAttempts)
          retries.push({
            d: { url: d.url, token: d.token, batch: d.batch, attempt, payload: d.payload },
            dueAtMs: Date.now() + this.retryBaseMs * 2 ** (attempt - 1),
          });
        else this.o.logger?.warn({ txid: d.payload['txid'], attempts: attempt }, 'callback given up');
      }
      await this.enqueue(retries);
    }
    await this.o.redis.zrem(this.o.keys.callbackQueue, ...items.map((i) => i.member));
  }

  private async post(url: string, token: string, body: Record<string, unknown>): Promise<SendResult> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=UTF-8' };
    if (token) headers['Authorization'] = `Bearer ${token}`;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      return res.status >= 200 && res.status < 300 ? 'ok' : 'status';
    } catch {
      return 'network';
    }
  }
}
