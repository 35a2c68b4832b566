import type { RequestHandler, Router } from 'express';
import {
  BACKLOG,
  ENCODE,
  EX_ENCODING,
  EX_TX,
  FAMILY,
  IDEMPOTENCY,
  POLICY_SIZE,
  READER,
  RECORD_BODY,
  TX,
  WRITER,
  WRITE_NOTE,
  contentRoutes,
  encodeParam,
  feature,
  idempotencyKeyParam,
  json,
  problems,
  rawBody,
  replayedHeader,
  txIdParam,
} from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';
import { MatchResult, RecordStatus, RecordWriteResult } from '../openapi/schemas';
import { answer, bodyOf, encodeOf, recordBody, sendContent } from './records-http';
import type { RecordUseCases, RecordsAuth } from './records-http';
import { receiptHandlers, receiptRoute } from './receipts';

/** /api/v1/records: independent records (spec §4.2, DESIGN §3). */
const content = contentRoutes('An independent record.', 'The bytes on chain.', problems(READER, TX, FAMILY));

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
      errors: problems(WRITER, ENCODE, RECORD_BODY, POLICY_SIZE, IDEMPOTENCY, BACKLOG),
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
    recordContent: content.get,
    recordContentHead: content.head,
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
  { reads, writes, receipts }: RecordUseCases,
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
      answer((req) => writes.writeIndependent(auth.caller(req), { body: bodyOf(req), encode: encodeOf(req) })),
    ],
    recordStatus: [
      auth.read,
      answer(async (req) => {
        const { confirmation, publication, failure } = await reads.status('independent', req.params['txId']);
        return { confirmation, publication, ...(failure ? { failure } : {}) };
      }),
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
      answer((req) => reads.match('independent', req.params['txId'], { body: bodyOf(req), encode: encodeOf(req) })),
    ],
    recordReceipt: receiptHandlers(receipts, 'independent', auth),
  });
}
