import type { Refusal } from '@proofline/chain-domain';
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

/**
 * What publication settles besides the record, as the worker and every test fixture wire it:
 * accepted → the proof store watches the transaction until a verified proof is stored, and the
 * funding pool confirms it (its change becomes spendable); held → watched only, the funding stays
 * unsettled until the confirmation pass settles it (`onSeen`, `refusedWhileConfirming`); refused → the pool fails it,
 * releasing its inputs only when `releasable(code)` says the transaction can never be mined
 * (`inputsReleasable` of @proofline/chain-wallet) or it was never sent. Idempotent.
 */
export function publicationSettlement(o: {
  pool: FundingSettle;
  proofs: ProofWatch;
  clock: Clock;
  releasable: (code: string) => boolean;
  /**
   * The confirmation pass's `pollAfterMs`: a held transaction is watched as if it had waited that
   * long already, so the next pass asks ARC about it (its change waits for SEEN_ON_NETWORK).
   */
  pollAfterMs?: number;
}): PublicationSettlement {
  return {
    accepted: async (txId) => {
      await o.proofs.watch([txId], o.clock.now());
      await o.pool.confirm(txId);
    },
    held: async (txId) => {
      await o.proofs.watch([txId], new Date(o.clock.now().getTime() - (o.pollAfterMs ?? 0)));
    },
    refused: async (txId, refusal) => {
      await o.pool.fail(txId, { releaseInputs: refusal.neverSent || o.releasable(refusal.code) });
      if (!refusal.neverSent) await o.proofs.countRejection(refusal.code);
    },
  };
}

/**
 * The failure a refused record shows (its status' `failure`): `DOUBLE_SPEND` for a double spend
 * (DOUBLE_SPEND_ATTEMPTED, 466), `INVALID_TX` for every other refusal, then the verdict's reason
 * (`INVALID_TX: ARC 461: script validation failed: …`). The one place a verdict becomes a failure.
 */
export function recordFailure(v: Refusal): string {
  const doubleSpend = v.kind === 'refused' && (v.code === 'DOUBLE_SPEND_ATTEMPTED' || v.code === 466);
  return `${doubleSpend ? 'DOUBLE_SPEND' : 'INVALID_TX'}: ${v.kind === 'refused' ? v.reason : v.detail}`;
}

/**
 * The confirmation pass saw these transactions SEEN_ON_NETWORK or MINED: their funding is
 * confirmed (change spendable; a no-op for a transaction already confirmed or unknown to the pool).
 */
export function seenWhileConfirming(pool: FundingSettle): (txIds: readonly string[]) => Promise<void> {
  return async (txIds) => {
    await Promise.all(txIds.map((txId) => pool.confirm(txId)));
  };
}

/**
 * A published record whose transaction ARC refused later (REJECTED, a DOUBLE_SPEND_ATTEMPTED whose
 * competing transaction is MINED, or a re-broadcast refused): the record fails with it; its funding is
 * dropped, never released (the transaction reached the network).
 */
export function refusedWhileConfirming(o: {
  records: RecordStore;
  pool: FundingSettle;
  clock: Clock;
}): (r: Refusal) => Promise<void> {
  return async (r) => {
    await o.records.failPublished(r.txId, o.clock.now(), recordFailure(r));
    await o.pool.fail(r.txId, { releaseInputs: false });
  };
}

/** The bytes accepted at write time: the only bytes ever (re-)broadcast for a record. */
export function rawTxOf(records: RecordStore): (txIds: readonly string[]) => Promise<(Uint8Array | null)[]> {
  return (txIds) => Promise.all(txIds.map(async (txId) => (await records.publication(txId))?.rawTx ?? null));
}
