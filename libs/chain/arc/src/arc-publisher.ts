import type { BroadcastVerdict, ChainPublisher } from '@proofline/chain-domain';
import type { ArcClient, ArcSubmission } from './arc-client';
import { ArcTransientError } from './arc-errors';

/** One slot of {@link ArcChainPublisher.submitMany}: a verdict, or a transient fault for that tx alone. */
export type BatchSubmitOutcome =
  | { readonly txId: string; readonly verdict: BroadcastVerdict }
  | { readonly txId: string; readonly retry: ArcTransientError };

/**
 * The `ChainPublisher` port on the ARC client: ARC's answer as a {@link BroadcastVerdict}
 * (arc-verdict.ts reads it); network, timeout, 5xx, 429, 409 and malformed answers throw
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
