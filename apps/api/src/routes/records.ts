import type { RequestHandler, Router } from 'express';
import type { RecordReads, RecordReceipts, RecordWrites } from '@proofline/records-feature';
import {
  BACKLOG,
  ENCODE,
  EX_ENCODING,
  EX_TX,
  FAMILY,
  IDEMPOTENCY,
  READER,
  RECORD_BODY,
  TX,
  WRITER,
  WRITE_NOTE,
  contentOk,
  encodeParam,
  feature,
  headOk,
  idempotencyKeyParam,
  ifNoneMatchParam,
  json,
  notModified,
  problems,
  rawBody,
  replayedHeader,
  txIdParam,
} from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';
import { MatchResult, RecordStatus, RecordWriteResult } from '../openapi/schemas';
import { bodyOf, queryParam, recordBody, sendContent } from './records-http';
import type { RecordsAuth } from './records-http';
import { receiptHandlers, receiptRoute } from './receipts';

/** /api/v1/records: independent records (spec §4.2, DESIGN §3). */
export const RECORD_ROUTES = routeTable({
  base: '/api/v1/records',
  tag: 'Independent records',
  routes: {
    writeRecord: {
      method: 'post',
      path: '',
      security: 'key',
      summary: 'Write an independent record.',
      description: WRITE_NOTE,
      request: {
        query: [encodeParam()],
        headers: [idempotencyKeyParam()],
        body: rawBody('The record bytes.', 'an invoice'),
      },
      responses: {
        '200': json(
          'Accepted; publication follows asynchronously.',
          RecordWriteResult,
          { txId: EX_TX, encoding: EX_ENCODING },
          replayedHeader(),
        ),
      },
      errors: problems(WRITER, ENCODE, RECORD_BODY, IDEMPOTENCY, BACKLOG),
    },
    recordStatus: {
      method: 'get',
      path: '/{txId}/status',
      security: 'key',
      summary: 'Confirmation of an independent record.',
      request: { params: [txIdParam('An independent record.')] },
      responses: { '200': json('Status.', RecordStatus, { confirmation: null, publication: 'pending' }) },
      errors: problems(READER, TX, FAMILY),
    },
    recordContent: {
      method: 'get',
      path: '/{txId}/content',
      security: 'key',
      summary: 'The bytes on chain.',
      request: { params: [txIdParam('An independent record.')], headers: [ifNoneMatchParam()] },
      responses: { '200': contentOk(), '304': notModified() },
      errors: problems(READER, TX, FAMILY),
    },
    recordContentHead: {
      method: 'head',
      path: '/{txId}/content',
      security: 'key',
      summary: 'Length and type of the record.',
      request: { params: [txIdParam('An independent record.')], headers: [ifNoneMatchParam()] },
      responses: { '200': headOk(), '304': notModified() },
      errors: problems(READER, TX, FAMILY),
    },
    matchRecord: {
      method: 'post',
      path: '/{txId}/match',
      security: 'key',
      summary: 'Does this content match the record?',
      request: {
        params: [txIdParam('The record to compare with.')],
        query: [encodeParam()],
        body: rawBody('The content to compare.', 'an invoice'),
      },
      responses: { '200': json('Match result.', MatchResult, { match: false, confirmation: null }) },
      errors: problems(READER, TX, FAMILY, feature('verify'), ENCODE, RECORD_BODY),
    },
    recordReceipt: receiptRoute('independent'),
  },
});

/** The independent records router (see linked-records.ts for `idempotent`). */
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
  const body = recordBody(maxRecordBytes);
  return mountRoutes(RECORD_ROUTES, {
    writeRecord: [
      auth.write,
      ...body,
      idempotent,
      async (req, res) => {
        const result = await writes.writeIndependent(auth.caller(req), {
          body: bodyOf(req),
          encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID'),
        });
        res.status(200).json(result);
      },
    ],
    recordStatus: [
      auth.read,
      async (req, res) => {
        const { confirmation, publication, failure } = await reads.status('independent', req.params['txId']);
        res.status(200).json({ confirmation, publication, ...(failure ? { failure } : {}) });
      },
    ],
    recordContent: [
      auth.read,
      async (req, res) => {
        sendContent(req, res, await reads.content('independent', req.params['txId']));
      },
    ],
    matchRecord: [
      auth.read,
      ...body,
      async (req, res) => {
        const result = await reads.match('independent', req.params['txId'], {
          body: bodyOf(req),
          encode: queryParam(req, 'encode', 'ENCODE_PARAM_INVALID'),
        });
        res.status(200).json(result);
      },
    ],
    recordReceipt: receiptHandlers(receipts, 'independent', auth),
  });
}
