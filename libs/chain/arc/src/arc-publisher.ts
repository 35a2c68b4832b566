import { spentTxIds } from '@proofline/chain-domain';
import type { BroadcastVerdict, ChainPublisher } from '@proofline/chain-domain';
import type { ArcClient, ArcSubmission } from './arc-client';
import { ArcTransientError } from './arc-errors';

// The ChainPublisher port on ARC, in two layers: ArcChainPublisher sends what it is given in one
// request (bytes become hex here, at the edge) and reads each answer as a BroadcastVerdict;
// ArcSubmitBatcher, the publisher every worker uses, coalesces the submissions of concurrent jobs
// into `POST /v1/txs` requests on top of it, parents before children.

/** One slot of {@link ArcChainPublisher.submitMany}: a verdict, or a transient fault for that tx alone. */
export type BatchSubmitOutcome =
  | { readonly txId: string; readonly verdict: BroadcastVerdict }
  | { readonly txId: string; readonly retry: ArcTransientError };

/**
 * The `ChainPublisher` port on the ARC client: ARC's answer as a {@link BroadcastVerdict}
 * (chain-domain's broadcast-verdict.ts reads it); network, timeout, 5xx, 429, 409 and malformed answers throw
 * {@link ArcTransientError} (retryable: BullMQ backs off), 401/403 `ArcAuthError`.
 *
 * Idempotent by txId: it only ever re-sends the bytes it is given (ARC answers a known tx with its
 * stored status); it never builds a transaction.
 */
export class ArcChainPublisher implements ChainPublisher {
  constructor(private readonly client: ArcClient) {}

  submit(tx: { readonly txId: string; readonly rawTx: Uint8Array }): Promise<BroadcastVerdict> {
    return this.client.submit(toSubmission(tx));
  }

  /**
   * Submits several transactions in one `POST /v1/txs`; outcomes in the order of `txs`. When ARC
   * refuses the whole batch (one unparsable tx fails the request), falls back to one `submit`
   * per tx so only the culprit is refused. Throws only when the whole request failed transiently.
   */
  async submitMany(
    txs: readonly { readonly txId: string; readonly rawTx: Uint8Array }[],
  ): Promise<BatchSubmitOutcome[]> {
    const subs: ArcSubmission[] = txs.map(toSubmission);
    let results: (BroadcastVerdict | ArcTransientError)[];
    try {
      results = await this.client.submitMany(subs);
    } catch (e) {
      if (!(e instanceof ArcTransientError && e.reason === 'batch-refused')) throw e;
      results = [];
      for (const sub of subs) {
        try {
          results.push(await this.client.submit(sub));
        } catch (inner) {
          if (inner instanceof ArcTransientError) results.push(inner);
          else throw inner;
        }
      }
    }
    return results.map((r, i) => {
      const txId = (subs[i] as ArcSubmission).txId;
      return r instanceof ArcTransientError ? { txId, retry: r } : { txId, verdict: r };
    });
  }
}

/** ARC's JSON speaks hex: the bytes become hex here, at the edge, and nowhere before. */
function toSubmission(tx: { readonly txId: string; readonly rawTx: Uint8Array }): ArcSubmission {
  return { txId: tx.txId, hex: Buffer.from(tx.rawTx.buffer, tx.rawTx.byteOffset, tx.rawTx.byteLength).toString('hex') };
}

/** Requests in flight at once by default (ARC_MAX_IN_FLIGHT): see {@link SubmitBatcherOptions.maxInFlight}. */
export const DEFAULT_MAX_IN_FLIGHT = 4;

export interface SubmitBatcherOptions {
  /** How long the first submission of a batch waits for others (default 5 ms). */
  readonly windowMs?: number;
  /** Largest batch sent in one `POST /v1/txs` (default 100). */
  readonly maxBatch?: number;
  /**
   * Requests out at once (default {@link DEFAULT_MAX_IN_FLIGHT}). Each waits for ARC's answer
   * (up to `X-MaxTimeout`); one at a time made a slow ARC the ceiling of a whole process.
   */
  readonly maxInFlight?: number;
}

interface Waiting {
  readonly tx: { readonly txId: string; readonly rawTx: Uint8Array };
  /** The txIds of the outputs it spends (empty when its bytes do not parse: never held back). */
  readonly parents: readonly string[];
  readonly resolve: (r: BroadcastVerdict) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * A `ChainPublisher` that coalesces the submissions of jobs running concurrently in one process:
 * the first `submit` opens a window of `windowMs`; everything submitted meanwhile (up to
 * `maxBatch`) goes out as ONE `POST /v1/txs`, and each caller gets its own transaction's outcome
 * (a per-transaction transient fault rejects only that caller, who retries with backoff). A
 * lone submission uses `POST /v1/tx`. The same bytes, only ever: it never builds a transaction.
 *
 * Up to `maxInFlight` requests out at once, and parents always before children: a transaction
 * that spends an output of one in a request not answered yet MUST NOT be sent (it waits, and so
 * does whatever spends it, until that request is answered); a parent and its child in the same
 * request are fine, the request keeps submission order and every record transaction is sent in
 * Extended Format, which ARC validates from its own input data without looking the parent up.
 * Sent the other way, a child could reach ARC before its parent and be refused for an unknown
 * input (460, or 462 from a node).
 */
export class ArcSubmitBatcher implements ChainPublisher {
  private queue: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inFlight = 0;
  /** txIds of the requests out, not answered yet (a txId may be out twice: a re-send). */
  private readonly outstanding = new Map<string, number>();
  private readonly windowMs: number;
  private readonly maxBatch: number;
  readonly maxInFlight: number;
  /** Sizes of the requests sent, for tests and metrics (bounded to the last 1000). */
  readonly sent: number[] = [];
  /** Most requests ever out at once (tests, metrics). */
  peakInFlight = 0;

  constructor(
    private readonly publisher: Pick<ArcChainPublisher, 'submit' | 'submitMany'>,
    options: SubmitBatcherOptions = {},
  ) {
    this.windowMs = Math.max(0, options.windowMs ?? 5);
    this.maxBatch = Math.max(1, options.maxBatch ?? 100);
    this.maxInFlight = Math.max(1, Math.floor(options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT));
  }

  submit(tx: { readonly txId: string; readonly rawTx: Uint8Array }): Promise<BroadcastVerdict> {
    return new Promise<BroadcastVerdict>((resolve, reject) => {
      this.queue.push({ tx, parents: parentsOf(tx.rawTx), resolve, reject });
      // With every slot taken, the next answer sends what waits.
      if (this.inFlight >= this.maxInFlight) return;
      if (this.queue.length >= this.maxBatch) this.flush();
      else if (!this.timer) this.timer = setTimeout(() => this.flush(), this.windowMs);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.inFlight < this.maxInFlight) {
      const batch = this.nextBatch();
      if (batch.length === 0) return;
      this.inFlight += 1;
      this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
      for (const w of batch) this.outstanding.set(w.tx.txId, (this.outstanding.get(w.tx.txId) ?? 0) + 1);
      void this.send(batch).finally(() => {
        this.inFlight -= 1;
        for (const w of batch) {
          const n = (this.outstanding.get(w.tx.txId) ?? 1) - 1;
          if (n > 0) this.outstanding.set(w.tx.txId, n);
          else this.outstanding.delete(w.tx.txId);
        }
        // What waited during the request has waited long enough: no new window.
        if (this.queue.length > 0) this.flush();
      });
    }
  }

  /**
   * Takes from the queue, in order, up to `maxBatch` transactions none of whose parents is in a
   * request out or held back; the held back stay queued, in order. The walk stops at a full
   * batch: what follows stays queued as it is (nothing more joins this batch, so nothing needs
   * holding back), and a long queue is not walked whole for every request sent.
   */
  private nextBatch(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const held = new Set<string>();
    const queue = this.queue;
    let i = 0;
    for (; i < queue.length && batch.length < this.maxBatch; i++) {
      const w = queue[i] as Waiting;
      if (w.parents.some((p) => this.outstanding.has(p) || held.has(p))) {
        rest.push(w);
        held.add(w.tx.txId);
      } else batch.push(w);
    }
    this.queue = i < queue.length ? rest.concat(queue.slice(i)) : rest;
    return batch;
  }

  private async send(batch: Waiting[]): Promise<void> {
    this.sent.push(batch.length);
    if (this.sent.length > 1000) this.sent.splice(0, this.sent.length - 1000);
    if (batch.length === 1) {
      const only = batch[0] as Waiting;
      try {
        only.resolve(await this.publisher.submit(only.tx));
      } catch (e) {
        only.reject(e);
      }
      return;
    }
    try {
      const outcomes = await this.publisher.submitMany(batch.map((w) => w.tx));
      batch.forEach((w, i) => {
        const o = outcomes[i];
        if (!o) w.reject(new Error(`no outcome for ${w.tx.txId} in the batch answer`));
        else if ('retry' in o) w.reject(o.retry);
        else w.resolve(o.verdict);
      });
    } catch (e) {
      for (const w of batch) w.reject(e);
    }
  }
}

/** The txIds a transaction spends from; none when the bytes are not a transaction (nothing to order). */
function parentsOf(rawTx: Uint8Array): string[] {
  try {
    return spentTxIds(rawTx);
  } catch {
    return [];
  }
}
