import type { BroadcastVerdict, ChainPublisher } from '@proofline/chain-domain';
import type { ArcChainPublisher } from './arc-publisher';

export interface SubmitBatcherOptions {
  /** How long the first submission of a batch waits for others (default 5 ms). */
  readonly windowMs?: number;
  /** Largest batch sent in one `POST /v1/txs` (default 100). */
  readonly maxBatch?: number;
}

interface Waiting {
  readonly tx: { readonly txId: string; readonly rawTx: Uint8Array };
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
 * One request in flight at a time, in submission order: whatever is submitted while a request is
 * out goes in the next one, sent as soon as the first is answered. A chain's successors are
 * submitted right after their parents (the publisher follows the chain), so two batches in flight
 * at once could deliver a child before its parent; ARC (and the devnet) then refuse the child for
 * an unknown input (462), a permanent rejection that failed the rest of the chain with it.
 */
export class ArcSubmitBatcher implements ChainPublisher {
  private queue: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inFlight = false;
  private readonly windowMs: number;
  private readonly maxBatch: number;
  /** Sizes of the requests sent, for tests and metrics (bounded to the last 1000). */
  readonly sent: number[] = [];

  constructor(
    private readonly publisher: Pick<ArcChainPublisher, 'submit' | 'submitMany'>,
    options: SubmitBatcherOptions = {},
  ) {
    this.windowMs = Math.max(0, options.windowMs ?? 5);
    this.maxBatch = Math.max(1, options.maxBatch ?? 100);
  }

  submit(tx: { readonly txId: string; readonly rawTx: Uint8Array }): Promise<BroadcastVerdict> {
    return new Promise<BroadcastVerdict>((resolve, reject) => {
      this.queue.push({ tx, resolve, reject });
      // While a request is out, its completion sends what waits.
      if (this.inFlight) return;
      if (this.queue.length >= this.maxBatch) this.flush();
      else if (!this.timer) this.timer = setTimeout(() => this.flush(), this.windowMs);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.inFlight || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.maxBatch);
    this.inFlight = true;
    void this.send(batch).finally(() => {
      this.inFlight = false;
      // What waited during the request has waited long enough: no new window.
      if (this.queue.length > 0) this.flush();
    });
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
