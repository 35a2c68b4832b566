import type { ArcClient } from '@proofline/chain-arc';
import type { FeePolicy } from './fee-rate';
import type { SubmitPort } from './ports';

/**
 * The splitter's {@link SubmitPort} on the ARC client: submits the Extended Format bytes (ARC
 * validates them without fetching parents) and answers ARC's verdict (arc-verdict.ts of
 * @proofline/chain-arc reads it). Transient faults and auth errors throw: the outcome is
 * ambiguous, so the splitter keeps the split committed and re-submits the same bytes.
 */
export function arcSubmitPort(client: Pick<ArcClient, 'submit'>): SubmitPort {
  return (tx) => client.submit({ txId: tx.txId, hex: tx.efHex });
}

/** ARC's `GET /v1/policy` (mining fee and size limits), in the shape `FeeRateCache` takes. */
export function arcFeePolicy(client: Pick<ArcClient, 'policy'>): () => Promise<FeePolicy> {
  return async () => {
    const p = await client.policy();
    return {
      satoshis: p.satoshisPerKb,
      bytes: 1000,
      maxTxBytes: p.maxTxSizePolicy,
      maxScriptBytes: p.maxScriptSizePolicy,
    };
  };
}
