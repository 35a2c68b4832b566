import { Router } from 'express';
import type { RecordsService } from '@proofline/records-feature';
import { bodyOf, queryParam, recordBody, sendContent } from './records-http';
import type { RecordsAuth } from './records-http';

/** /api/v1/linkedrecords (spec §4.1, DESIGN §3). Routes parse input, call one use case, map the result. */
export function linkedRecordsRoutes(service: RecordsService, auth: RecordsAuth, maxRecordBytes: number): Router {
  const router = Router();
  const body = recordBody(maxRecordBytes);

  router.post('/', auth.write, ...body, async (req, res) => {
    const result = await service.createLinked(auth.caller(req), { body: bodyOf(req), encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID') });
    res.status(200).json(result);
  });

  router.post('/:txId/update', auth.write, ...body, async (req, res) => {
    const result = await service.updateLinked(auth.caller(req), req.params['txId'], {
      body: bodyOf(req),
      encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID'),
      updateToken: queryParam(req, 'updateToken', 'UPDATE_TOKEN_PARAM_INVALID'),
    });
    res.status(200).json(result);
  });

  router.post('/:txId/delete', auth.write, async (req, res) => {
    const result = await service.deleteLinked(auth.caller(req), req.params['txId'], {
      updateToken: queryParam(req, 'updateToken', 'UPDATE_TOKEN_PARAM_INVALID'),
    });
    res.status(200).json(result);
  });

  router.get('/:txId/status', auth.read, async (req, res) => {
    res.status(200).json(await service.status('linked', req.params['txId']));
  });

  router.get('/:txId/content', auth.read, async (req, res) => {
    sendContent(req, res, await service.content('linked', req.params['txId']));
  });

  router.post('/:txId/match', auth.read, ...body, async (req, res) => {
    const result = await service.match('linked', req.params['txId'], {
      body: bodyOf(req),
      encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID'),
      prevTxId: queryParam(req, 'prevTxId', 'TX_ID_PARAM_INVALID'),
    });
    res.status(200).json(result);
  });

  router.get('/:txId/navigate', auth.read, async (req, res) => {
    res.status(200).json(await service.navigate(req.params['txId'], queryParam(req, 'links', 'LINKS_PARAM_INVALID')));
  });

  return router;
}
