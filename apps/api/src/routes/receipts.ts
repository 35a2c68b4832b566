import type { RequestHandler } from 'express';
import type { RecordReceipts } from '@proofline/records-feature';
import type { RecordFamily } from '@proofline/records-domain';
import {
  EX_BLOCK,
  EX_HEADER,
  EX_PROOF,
  EX_TX,
  FAMILY,
  READER,
  TX,
  feature,
  json,
  problems,
  retryAfter,
  txIdParam,
} from '../openapi/parts';
import type { RouteDecl } from '../openapi/route';
import { Receipt } from '../openapi/schemas';
import type { RecordsAuth } from './records';

/** `GET …/{txId}/receipt` of a record family, declared in each records route table. */
export function receiptRoute(family: RecordFamily): RouteDecl {
  const linked = family === 'linked';
  return {
    method: 'get',
    path: '/{txId}/receipt',
    security: 'key',
    summary: 'A receipt that proves the record offline (raw tx, TSC proof, header, Atomic BEEF).',
    description:
      'Check it with no service: `npm run cli -- receipt verify FILE [--content PATH]`. It does not prove that the header is on the longest chain: compare blockHash with a block explorer or headers service.',
    request: { params: [txIdParam('A confirmed record.')] },
    responses: {
      '200': json('The receipt.', Receipt, {
        version: 1,
        txId: EX_TX,
        family: linked ? 'linkedrecords' : 'records',
        ...(linked ? { prevTxId: null } : {}),
        rawTx: '0100000001' + '00'.repeat(40),
        encoding: ['SHA256'],
        contentType: 'application/octet-stream; event-encoded=SHA256',
        merkleProof: EX_PROOF,
        blockHeader: EX_HEADER,
        blockHash: EX_BLOCK,
        blockHeight: 812,
        beef: '0100beef' + '00'.repeat(20),
      }),
    },
    errors: problems(READER, TX, FAMILY, ...(linked ? [feature('linked')] : []), {
      409: {
        codes: ['RECEIPT_NOT_READY'],
        why: 'Not confirmed yet (Retry-After), or rejected by the chain for good (no Retry-After).',
        headers: retryAfter,
      },
    }),
  };
}

/**
 * The handlers of `GET …/{txId}/receipt` (any valid key): 200 with the receipt once confirmed,
 * 409 RECEIPT_NOT_READY + Retry-After before, 404/400 as the other reads. `null` (not served)
 * when the composition has no receipts.
 */
export function receiptHandlers(
  receipts: RecordReceipts | undefined,
  family: RecordFamily,
  auth: Pick<RecordsAuth, 'read'>,
): RequestHandler[] | null {
  if (!receipts) return null;
  return [
    auth.read,
    async (req, res) => {
      const receipt = await receipts.receipt(family, req.params['txId']);
      // A receipt may change only if its block were reorganised away: never cache it for long.
      res.setHeader('Cache-Control', 'private, no-cache');
      res.status(200).json(receipt);
    },
  ];
}
