import type { ChainPublisher, SubmitResult } from '@proofline/chain-domain';
import type { ArcClient, ArcSubmission, ArcTxResult } from './arc-client';
import { ArcTransientError } from './arc-errors';

/** A rejection as the records feature sees it, plus ARC's own code for status and metrics. */
export type ArcSubmitResult = SubmitResult & { readonly arcCode?: number | 'REJECTED' | 'DOUBLE_SPEND_ATTEMPTED' };

/** One slot of {@link ArcChainPublisher.submitMany}: a result, or a transient fault for that tx alone. */
export type BatchSubmitOutcome =
  | { readonly txId: string; readonly result: ArcSubmitResult }
  | { readonly txId: string; readonly retry: ArcTransientError };

/**
 * Maps ARC's answers onto the records feature's `ChainPublisher` port.
 *
 * | ARC answer | SubmitResult |
 * |---|---|
 * | SEEN_ON_NETWORK, RECEIVED…ACCEPTED_BY_NETWORK, MINED_IN_STALE_BLOCK | `accepted` (the tracker follows it to MINED) |
 * | MINED | `already-known` |
 * | SEEN_IN_ORPHAN_MEMPOOL | `rejected MISSING_INPUT` (a parent is not there yet: the publisher retries the same bytes) |
 * | DOUBLE_SPEND_ATTEMPTED, 466 | `rejected DOUBLE_SPEND` |
 * | 400, 460–464, 467–475 (465 fee and 473 cumulative fee included), REJECTED | `rejected INVALID_TX`, detail `ARC <code>: …`, `arcCode` set |
 * | network, timeout, 5xx, 429, 409, malformed/unknown answers | throws {@link ArcTransientError} (retryable): BullMQ backs off |
 * | 401/403 | throws `ArcAuthError` (not retryable) |
 *
 * Idempotent by txId: it only ever re-sends the bytes it is given (ARC answers a known tx with its
 * stored status); it never builds a transaction.
 */
export class ArcChainPublisher implements ChainPublisher {
  constructor(private readonly client: ArcClient) {}

  async submit(tx: { readonly txId: string; readonly rawHex: string }): Promise<ArcSubmitResult> {
    return toSubmitResult(await this.client.submit({ txId: tx.txId, hex: tx.rawHex }));
  }

  /**
   * Submits several transactions in one `POST /v1/txs`; results in the order of `txs`. When ARC
   * refuses the whole batch (one unparsable tx fails the request), falls back to one `submit`
   * per tx so only the culprit is rejected. Throws only when the whole request failed transiently.
   */
  async submitMany(txs: readonly { readonly txId: string; readonly rawHex: string }[]): Promise<BatchSubmitOutcome[]> {
    const subs: ArcSubmission[] = txs.map((t) => ({ txId: t.txId, hex: t.rawHex }));
    let results: (ArcTxResult | ArcTransientError)[];
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
      return r instanceof ArcTransientError ? { txId, retry: r } : { txId, result: toSubmitResult(r) };
    });
  }
}

/** The mapping table above, as a function. */
export function toSubmitResult(r: ArcTxResult): ArcSubmitResult {
  switch (r.kind) {
    case 'mined':
      return { status: 'already-known' };
    case 'accepted':
      return { status: 'accepted' };
    case 'pending':
      if (r.status === 'SEEN_IN_ORPHAN_MEMPOOL') {
        return {
          status: 'rejected',
          code: 'MISSING_INPUT',
          detail: `ARC holds ${r.txId} as an orphan (a parent is missing)${r.extraInfo ? `: ${r.extraInfo}` : ''}`,
        };
      }
      return { status: 'accepted' };
    case 'double-spend':
      return {
        status: 'rejected',
        code: 'DOUBLE_SPEND',
        detail: `ARC DOUBLE_SPEND_ATTEMPTED: ${r.detail}${r.competingTxs.length ? ` (competing: ${r.competingTxs.join(', ')})` : ''}`,
        arcCode: 'DOUBLE_SPEND_ATTEMPTED',
      };
    case 'rejected':
      if (r.code === 466)
        return { status: 'rejected', code: 'DOUBLE_SPEND', detail: `ARC 466: ${r.detail}`, arcCode: 466 };
      return { status: 'rejected', code: 'INVALID_TX', detail: `ARC ${r.code}: ${r.detail}`, arcCode: r.code };
  }
}
