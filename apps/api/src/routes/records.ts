import { Router } from 'express';
import type { RecordsService } from '@proofline/records-feature';
import { bodyOf, queryParam, recordBody, sendContent } from './records-http';
import type { RecordsAuth } from './records-http';

/** /api/v1/records: independent records (spec §4.2, DESIGN §3). */
export function recordsRoutes(service: RecordsService, auth: RecordsAuth, maxRecordBytes: number): Router {
  const router = Router();
  const body = recordBody(maxRecordBytes);

  router.post('/', auth.write, ...body, async (req, res) => {
    const result = await service.writeIndependent(auth.caller(req), { body: bodyOf(req), encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID') });
    res.status(200).json(result);
  });

  router.get('/:txId/status', auth.read, async (req, res) => {
    const { confirmation, publication } = await service.status('independent', req.params['txId']);
    res.status(200).json({ confirmation, publication });
  });

  router.get('/:txId/content', auth.read, async (req, res) => {
    sendContent(req, res, await service.content('independent', req.params['txId']));
  });

  router.post('/:txId/match', auth.read, ...body, async (req, res) => {
    const result = await service.match('independent', req.params['txId'], {
      body: bodyOf(req),
      encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID'),
    });
    res.status(200).json(result);
  });

  return router;
}
