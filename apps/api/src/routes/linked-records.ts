import { Router } from 'express';
import type { RequestHandler } from 'express';
import type { RecordReads, RecordReceipts, RecordWrites } from '@proofline/records-feature';
import { bodyOf, queryParam, recordBody, sendContent } from './records-http';
import type { RecordsAuth } from './records-http';
import { mountReceiptRoute } from './receipts';

/** /api/v1/linkedrecords (spec §4.1, DESIGN §3). Routes parse input, call one use case, map the result. */
/**
 * `idempotent` runs on every write after authentication and the body (the `Idempotency-Key`
 * middleware in the app; a no-op by default).
 */
export function linkedRecordsRoutes(
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
    const result = await writes.createLinked(auth.caller(req), {
      body: bodyOf(req),
      encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID'),
    });
    res.status(200).json(result);
  });

  router.post('/:txId/update', auth.write, ...body, idempotent, async (req, res) => {
    const result = await writes.updateLinked(auth.caller(req), req.params['txId'], {
      body: bodyOf(req),
      encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID'),
      updateToken: queryParam(req, 'updateToken', 'UPDATE_TOKEN_PARAM_INVALID'),
    });
    res.status(200).json(result);
  });

  router.post('/:txId/delete', auth.write, idempotent, async (req, res) => {
    const result = await writes.deleteLinked(auth.caller(req), req.params['txId'], {
      updateToken: queryParam(req, 'updateToken', 'UPDATE_TOKEN_PARAM_INVALID'),
    });
    res.status(200).json(result);
  });

  router.get('/:txId/status', auth.read, async (req, res) => {
    res.status(200).json(await reads.status('linked', req.params['txId']));
  });

  router.get('/:txId/content', auth.read, async (req, res) => {
    sendContent(req, res, await reads.content('linked', req.params['txId']));
  });

  router.post('/:txId/match', auth.read, ...body, async (req, res) => {
    const result = await reads.match('linked', req.params['txId'], {
      body: bodyOf(req),
      encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID'),
      prevTxId: queryParam(req, 'prevTxId', 'TX_ID_PARAM_INVALID'),
    });
    res.status(200).json(result);
  });

  router.get('/:txId/navigate', auth.read, async (req, res) => {
    res.status(200).json(await reads.navigate(req.params['txId'], queryParam(req, 'links', 'LINKS_PARAM_INVALID')));
  });

  if (receipts) mountReceiptRoute(router, receipts, 'linked', auth);

  return router;
}
