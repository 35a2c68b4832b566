import { Router } from 'express';
import type { RequestHandler } from 'express';
import type { RecordReads, RecordReceipts, RecordWrites } from '@proofline/records-feature';
import { bodyOf, queryParam, recordBody, sendContent } from './records-http';
import type { RecordsAuth } from './records-http';
import { mountReceiptRoute } from './receipts';

/** /api/v1/records: independent records (spec §4.2, DESIGN §3). */
export function recordsRoutes(
  {
    reads,
    writes,
    receipts,
  }: { readonly reads: RecordReads; readonly writes: RecordWrites; readonly receipts?: RecordReceipts },
  auth: RecordsAuth,
  maxRecordBytes: number,
  idempotent: RequestHandler = (_req, _res, next) => next(),
): Router {
  const router = Router();
  const body = recordBody(maxRecordBytes);

  router.post('/', auth.write, ...body, idempotent, async (req, res) => {
    const result = await writes.writeIndependent(auth.caller(req), {
      body: bodyOf(req),
      encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID'),
    });
    res.status(200).json(result);
  });

  router.get('/:txId/status', auth.read, async (req, res) => {
    const { confirmation, publication, failure } = await reads.status('independent', req.params['txId']);
    res.status(200).json({ confirmation, publication, ...(failure ? { failure } : {}) });
  });

  router.get('/:txId/content', auth.read, async (req, res) => {
    sendContent(req, res, await reads.content('independent', req.params['txId']));
  });

  router.post('/:txId/match', auth.read, ...body, async (req, res) => {
    const result = await reads.match('independent', req.params['txId'], {
      body: bodyOf(req),
      encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID'),
    });
    res.status(200).json(result);
  });

  if (receipts) mountReceiptRoute(router, receipts, 'independent', auth);

  return router;
}
