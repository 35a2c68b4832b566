import type { ChainPublisher } from '@proofline/chain-domain';
import { recordsKeys } from '@proofline/records-data-access';
import type { Clock } from '@proofline/shared-config';
import type { WebhookStore } from '@proofline/webhooks-data-access';

/**
 * Wraps the records publisher's {@link ChainPublisher} (any chain) so that every record of a
 * tenant with webhooks enters the watch set BEFORE its transaction is submitted: it cannot be
 * confirmed unseen, and a failed watch (Redis down) fails the attempt, which BullMQ retries. One
 * extra script call per publication; a tenant without webhooks adds nothing else. The record's
 * tenant comes with the submission (the publisher read the record); a caller that does not pass
 * it costs one more round trip (the record's `tenant` field), as records and webhooks live under
 * different hash tags and no script reads both.
 */
export function watchPublications(
  publisher: ChainPublisher,
  deps: { store: Pick<WebhookStore, 'watchRecord' | 'recordTenant'>; prefix: string; clock: Clock },
): ChainPublisher {
  const keys = recordsKeys(deps.prefix);
  return {
    async submit(tx) {
      const tenant = tx.tenant ?? (await deps.store.recordTenant(keys.record(tx.txId)));
      if (tenant) await deps.store.watchRecord(tenant, tx.txId, deps.clock.now());
      return publisher.submit(tx);
    },
  };
}
