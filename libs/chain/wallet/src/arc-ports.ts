import type { ArcClient } from '@proofline/chain-arc';
import type { MiningFee } from './funding-wallet';
import type { SubmitOutcome, SubmitPort } from './ports';

/**
 * The splitter's {@link SubmitPort} on the ARC client: submits the Extended Format bytes (ARC
 * validates them without fetching parents) and maps ARC's answer:
 *
 * | ARC | SubmitOutcome |
 * |---|---|
 * | SEEN_ON_NETWORK, MINED | `accepted` (outputs spendable) |
 * | RECEIVED … ACCEPTED_BY_NETWORK, SEEN_IN_ORPHAN_MEMPOOL, MINED_IN_STALE_BLOCK | `pending` (wait; same bytes later) |
 * | 400, 46x | `rejected`, code `'46x'`, `reachedNetwork: false` (a POST refusal: never announced) |
 * | REJECTED | `rejected`, code `'REJECTED'` (its inputs are dropped: the reason is unknown) |
 * | DOUBLE_SPEND_ATTEMPTED | `rejected`, code `'DOUBLE_SPEND_ATTEMPTED'`, `reachedNetwork: true` |
 *
 * Transient faults (network, timeout, 5xx, 429, malformed answers) and auth errors throw: the
 * outcome is ambiguous, so the splitter keeps the split committed and re-submits the same bytes.
 */
export function arcSubmitPort(client: Pick<ArcClient, 'submit'>): SubmitPort {
  return async (tx): Promise<SubmitOutcome> => {
    const r = await client.submit({ txId: tx.txId, hex: tx.efHex });
    switch (r.kind) {
      case 'accepted':
      case 'mined':
        return { status: 'accepted' };
      case 'pending':
        return { status: 'pending', arcStatus: r.status };
      case 'rejected':
        return { status: 'rejected', code: String(r.code), reason: r.detail, reachedNetwork: false };
      case 'double-spend':
        return { status: 'rejected', code: 'DOUBLE_SPEND_ATTEMPTED', reason: r.detail, reachedNetwork: true };
    }
  };
}

/** ARC's `GET /v1/policy` mining fee, in the shape `effectiveFeeRate` and `FeeRateCache` take. */
export function arcMiningFee(client: Pick<ArcClient, 'policy'>): () => Promise<MiningFee> {
  return async () => ({ satoshis: (await client.policy()).satoshisPerKb, bytes: 1000 });
}
