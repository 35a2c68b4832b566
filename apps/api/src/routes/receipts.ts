import type { Router } from 'express';
import type { RecordReceipts } from '@proofline/records-feature';
import type { RecordFamily } from '@proofline/records-domain';
import type { RecordsAuth } from './records-http';

/**
 * `GET …/{txId}/receipt` (any valid key), mounted by the records routers: 200 with the receipt
 * once confirmed, 409 RECEIPT_NOT_READY + Retry-After before, 404/400 as the other reads.
 */
export function mountReceiptRoute(
  router: Router,
  receipts: RecordReceipts,
  family: RecordFamily,
  auth: Pick<RecordsAuth, 'read'>,
): void {
  router.get('/:txId/receipt', auth.read, async (req, res) => {
    const receipt = await receipts.receipt(family, req.params['txId']);
    // A receipt may change only if its block were reorganised away: never cache it for long.
    res.setHeader('Cache-Control', 'private, no-cache');
    res.status(200).json(receipt);
  });
}
