import type { Clock } from '@proofline/shared-config';
import type { RecordStore } from '@proofline/records-data-access';
import type { PublicationSettlement } from './publish';

/** The funding pool's settle steps (`FundingPool` of @proofline/chain-wallet fits). */
export interface FundingSettle {
  confirm(txId: string): Promise<unknown>;
  fail(txId: string, options: { readonly releaseInputs: boolean }): Promise<unknown>;
}

/** The proof store's watch list and rejection counter (`ArcProofStore` of @proofline/chain-arc fits). */
export interface ProofWatch {
  watch(txIds: readonly string[], at: Date): Promise<void>;
  countRejection(code: string): Promise<void>;
}

/** A refusal learnt while confirming (`ArcRefusal` of @proofline/chain-arc fits). */
export interface LateRefusal {
  readonly txId: string;
  readonly code: string;
  readonly detail: string;
}

/**
 * What publication settles besides the record, as the worker and every test fixture wire it:
 * accepted → the proof store watches the transaction until a verified proof is stored, and the
 * funding pool confirms it (its change becomes spendable); refused → the pool fails it,
 * releasing its inputs only when `releasable(code)` says the transaction can never be mined
 * (`inputsReleasable` of @proofline/chain-wallet) or it was never sent. Idempotent.
 */
export function publicationSettlement(o: {
  pool: FundingSettle;
  proofs: ProofWatch;
  clock: Clock;
  releasable: (code: string) => boolean;
}): PublicationSettlement {
  return {
    accepted: async (txId) => {
      await o.proofs.watch([txId], o.clock.now());
      await o.pool.confirm(txId);
    },
    refused: async (txId, refusal) => {
      await o.pool.fail(txId, { releaseInputs: refusal.neverSent || o.releasable(refusal.code) });
      if (!refusal.neverSent) await o.proofs.countRejection(refusal.code);
    },
  };
}

/**
 * A published record whose transaction ARC refused later (REJECTED, DOUBLE_SPEND_ATTEMPTED while
 * waiting for its proof): the record fails with ARC's code; its funding is dropped, never
 * released (the transaction reached the network).
 */
export function refusedWhileConfirming(o: {
  records: RecordStore;
  pool: FundingSettle;
  clock: Clock;
}): (r: LateRefusal) => Promise<void> {
  return async (r) => {
    const code = r.code === 'DOUBLE_SPEND_ATTEMPTED' ? 'DOUBLE_SPEND' : 'INVALID_TX';
    await o.records.failPublished(r.txId, o.clock.now(), `${code}: ARC ${r.code}: ${r.detail}`);
    await o.pool.fail(r.txId, { releaseInputs: false });
  };
}

/** The bytes accepted at write time: the only bytes ever (re-)broadcast for a record. */
export function rawTxOf(records: RecordStore): (txIds: readonly string[]) => Promise<(string | null)[]> {
  return (txIds) => Promise.all(txIds.map(async (txId) => (await records.publication(txId))?.rawTx ?? null));
}
