import type { ArcClient } from '@proofline/chain-arc';
import type { MiningFee } from './funding-wallet';
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

/** ARC's `GET /v1/policy` mining fee, in the shape `effectiveFeeRate` and `FeeRateCache` take. */
export function arcMiningFee(client: Pick<ArcClient, 'policy'>): () => Promise<MiningFee> {
  return async () => ({ satoshis: (await client.policy()).satoshisPerKb, bytes: 1000 });
}
