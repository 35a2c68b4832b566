import type { Refusal } from '@proofline/chain-domain';
import type { Clock } from '@proofline/shared-config';
import type { RecordStore } from '@proofline/records-data-access';
import type { PartitionIndex, PartitionLayouts } from '@proofline/shared-redis';
import type { Logger } from '@proofline/shared-logger';
import type { PublicationSettlement } from './publish';

/** The failure a record shows when the record it links to was rejected; cleared if that one is mined after all. */
export const PREVIOUS_REJECTED = 'PREVIOUS_REJECTED: the record this one links to was rejected by the chain';
/** Its lead, as the revive script matches it. */
const PREVIOUS_REJECTED_CODE = 'PREVIOUS_REJECTED';
/** Successors whose funding one final refusal releases. */
const SUCCESSORS_MAX = 1000;

/** The funding pool's settle steps (`FundingPool` of @proofline/chain-wallet fits). */
export interface FundingSettle {
  confirm(txId: string): Promise<unknown>;
  /** `confirm` for many transactions at once (a callback batch, a confirmation pass). */
  confirmMany(txIds: readonly string[]): Promise<unknown>;
  fail(txId: string, options: { readonly releaseInputs: boolean }): Promise<unknown>;
  /**
   * The records partitions the pool is sharded by and its txId index: the records store of a
   * composition uses the same (absent: one partition).
   */
  readonly partitions?: { readonly count: number; readonly layouts?: PartitionLayouts };
  readonly index?: PartitionIndex;
  /** The oldest transactions committed but not settled (the confirmation pass checks them for a stored proof). */
  unsettled?(limit: number): Promise<readonly { readonly txId: string; readonly kind: string }[]>;
}

/** The proof store's watch list and rejection counter (`ArcProofStore` of @proofline/chain-arc fits). */
export interface ProofWatch {
  watch(txIds: readonly string[], at: Date): Promise<void>;
  isWatched(txId: string): Promise<boolean>;
  countRejection(code: string): Promise<void>;
}

/**
 * What publication settles besides the record, as the worker and every test fixture wire it:
 * accepted → the proof store watches the transaction until a verified proof is stored, and the
 * funding pool confirms it (its change becomes spendable); held → watched only, the funding stays
 * unsettled until the confirmation pass settles it (`seenWhileConfirming`, `refusedWhileConfirming`);
 * refused → released only when `releasable(code)` says the transaction can never be mined
 * (`inputsReleasable` of @proofline/chain-wallet: 461, 463, 464), else watched with its funding
 * committed until the chain decides; never sent → released unless the refused transaction its
 * chain waits on is still watched. Idempotent.
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
      if (refusal.neverSent) {
        // Its chain waits on a refused transaction that may still be mined (still watched): its
        // funding stays committed, it is put back to pending if that one is mined after all.
        const waits = refusal.rejected !== undefined && (await o.proofs.isWatched(refusal.rejected));
        if (!waits) await o.pool.fail(txId, { releaseInputs: true });
        return;
      }
      await o.proofs.countRejection(refusal.code);
      // Proven never minable: inputs back. Otherwise a broadcast of it may still be mined: its
      // funding stays committed and it is watched (polled, the same bytes re-sent) until the chain
      // decides or the confirmation pass's bound passes (`refusedWatchMs`).
      if (o.releasable(refusal.code)) await o.pool.fail(txId, { releaseInputs: true });
      else await o.proofs.watch([txId], o.clock.now());
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
 * The confirmation pass (or a callback) saw these transactions SEEN_ON_NETWORK or MINED: their
 * funding is confirmed (change spendable; a no-op for a transaction already confirmed or unknown
 * to the pool), and a record failed for a refusal the chain did not follow is published again,
 * its successors failed because of it put back to pending (`RecordStore.revive`). One pool call
 * and one state read per slot group for the whole batch; only a failed record costs more.
 */
export function seenWhileConfirming(o: {
  records: RecordStore;
  pool: FundingSettle;
  clock: Clock;
  logger?: Logger;
}): (txIds: readonly string[]) => Promise<void> {
  const revive = reviveRecords(
    o,
    'a refused record transaction was seen on the network after all: the record is published again',
  );
  return async (txIds) => {
    if (txIds.length === 0) return;
    await Promise.all([o.pool.confirmMany(txIds), revive(txIds)]);
  };
}

/**
 * The confirmation pass found these transactions held by ARC below SEEN_ON_NETWORK (a poll or a
 * re-broadcast answered RECEIVED … ACCEPTED_BY_NETWORK, not an orphan): ARC validated and stored
 * them, which is what publishes a record on its first broadcast, so a record failed for a refusal
 * ARC did not keep is published again at once, its successors failed because of it put back to
 * pending. Their funding stays unsettled: the change is freed only by {@link seenWhileConfirming}.
 */
export function heldWhileConfirming(o: {
  records: RecordStore;
  clock: Clock;
  logger?: Logger;
}): (txIds: readonly string[]) => Promise<void> {
  return reviveRecords(o, 'a refused record transaction is held by ARC after all: the record is published again');
}

/** Publishes the failed records among `txIds` again (`RecordStore.reviveMany`), logging `message` for each. */
function reviveRecords(
  o: { records: RecordStore; clock: Clock; logger?: Logger },
  message: string,
): (txIds: readonly string[]) => Promise<void> {
  return async (txIds) => {
    if (txIds.length === 0) return;
    const revived = await o.records.reviveMany(txIds, o.clock.now(), PREVIOUS_REJECTED_CODE);
    for (const r of revived) o.logger?.warn({ txId: r.txId, successors: r.successors.length }, message);
  };
}

/**
 * A watched transaction ARC refused: its record fails (published → failed; a record failed
 * already stays so). `final` (proven never minable, a competing transaction MINED, ARC's
 * REJECTED, or refused past the bound): its funding is dropped, never released (a broadcast of it
 * may have reached the network), and the successors failed because of it get their funding back
 * (never sent). Not final: the funding stays committed, the pass keeps watching it. True when the
 * record's state changed.
 */
export function refusedWhileConfirming(o: {
  records: RecordStore;
  pool: FundingSettle;
  clock: Clock;
}): (r: Refusal, how?: { readonly final: boolean }) => Promise<boolean> {
  return async (r, how = { final: true }) => {
    const changed = await o.records.failPublished(r.txId, o.clock.now(), recordFailure(r));
    if (!how.final) return changed;
    await o.pool.fail(r.txId, { releaseInputs: false });
    let next = (await o.records.meta(r.txId))?.nextTxId ?? null;
    for (let i = 0; next && i < SUCCESSORS_MAX; i++) {
      const meta = await o.records.meta(next);
      if (meta?.state !== 'failed' || !meta.failure?.startsWith(PREVIOUS_REJECTED_CODE)) break;
      await o.pool.fail(next, { releaseInputs: true });
      next = meta.nextTxId;
    }
    return changed;
  };
}

/** The bytes the publisher sent (EF, from what was accepted at write time): the only bytes ever re-broadcast for a record. */
export function rawTxOf(records: RecordStore): (txIds: readonly string[]) => Promise<(Uint8Array | null)[]> {
  return (txIds) => Promise.all(txIds.map(async (txId) => (await records.publication(txId))?.broadcastTx ?? null));
}
