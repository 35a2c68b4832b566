import type { Request, RequestHandler, Router } from 'express';
import {
  BACKLOG,
  CHAIN_DEPTH,
  CHAIN_END,
  ENCODE,
  EX_CONFIRMATION,
  EX_ENCODING,
  EX_TX,
  EX_TX2,
  FAMILY,
  IDEMPOTENCY,
  POLICY_SIZE,
  READER,
  RECORD_BODY,
  TOKEN,
  TX,
  WRITER,
  WRITE_NOTE,
  contentRoutes,
  encodeParam,
  feature,
  firstWriteRoute,
  idempotencyKeyParam,
  json,
  matchRoute,
  problems,
  rawBody,
  replayedHeader,
  txIdParam,
  updateTokenParam,
} from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';
import type { ResponseDecl } from '../openapi/route';
import {
  DeleteResult,
  LinkedStatus,
  LinkedWriteResult,
  LinksParam,
  MatchResult,
  NavigateResult,
  TxId,
} from '../openapi/schemas';
import { answer, bodyOf, encodeOf, queryParam, recordBody, sendContent } from './records';
import type { RecordUseCases, RecordsAuth } from './records';
import { receiptHandlers, receiptRoute } from './receipts';

const linkedWrite = (description: string): ResponseDecl =>
  json(
    description,
    LinkedWriteResult,
    { txId: EX_TX, updateToken: 'utk_' + 'Gx7'.repeat(14) + 'Q', encoding: EX_ENCODING },
    replayedHeader(),
  );

/** /api/v1/linkedrecords (spec §4.1, DESIGN §3): chains of versions. */
const content = contentRoutes(
  'A linked record.',
  'The bytes on chain (possibly not yet confirmed).',
  problems(READER, TX, FAMILY, feature('linked')),
);

export const LINKED_RECORD_ROUTES = routeTable({
  base: '/api/v1/linkedrecords',
  tag: 'Linked records',
  routes: {
    createLinkedRecord: firstWriteRoute(
      'Create a linked record (the first version of a chain).',
      'v1',
      linkedWrite('Accepted; publication follows asynchronously.'),
      feature('linked'),
    ),
    updateLinkedRecord: {
      method: 'post',
      path: '/{txId}/update',
      security: 'key',
      summary: 'Append a new version to a chain.',
      description: `${WRITE_NOTE} Of any number of concurrent updates of one record exactly one wins.`,
      request: {
        params: [txIdParam('The chain end to update.')],
        query: [encodeParam(), updateTokenParam()],
        headers: [idempotencyKeyParam()],
        body: rawBody('The new version.', 'v2'),
      },
      responses: { '200': linkedWrite('Accepted.') },
      errors: problems(
        WRITER,
        TX,
        FAMILY,
        feature('linked'),
        ENCODE,
        TOKEN,
        RECORD_BODY,
        POLICY_SIZE,
        CHAIN_END,
        CHAIN_DEPTH,
        IDEMPOTENCY,
        BACKLOG,
      ),
    },
    deleteLinkedRecord: {
      method: 'post',
      path: '/{txId}/delete',
      security: 'key',
      summary: 'Terminate a chain with an empty transaction.',
      description: WRITE_NOTE,
      request: {
        params: [txIdParam('The chain end to delete.')],
        query: [updateTokenParam()],
        headers: [idempotencyKeyParam()],
      },
      responses: { '200': json('Accepted.', DeleteResult, { txId: EX_TX }, replayedHeader()) },
      errors: problems(WRITER, TX, FAMILY, feature('linked'), TOKEN, CHAIN_END, CHAIN_DEPTH, IDEMPOTENCY, BACKLOG),
    },
    linkedRecordStatus: {
      method: 'get',
      path: '/{txId}/status',
      security: 'key',
      summary: 'Confirmation, publication and updatability.',
      request: { params: [txIdParam('A linked record.')] },
      responses: {
        '200': json('Status.', LinkedStatus, {
          confirmation: EX_CONFIRMATION,
          updatable: false,
          publication: 'published',
        }),
      },
      errors: problems(READER, TX, FAMILY, feature('linked')),
    },
    linkedRecordContent: content.get,
    linkedRecordContentHead: content.head,
    matchLinkedRecord: matchRoute(
      'Does this content (and link) match the record?',
      'v2',
      json('Match result.', MatchResult, { match: true, confirmation: EX_CONFIRMATION }),
      {
        query: [
          {
            name: 'prevTxId',
            description: 'For an update or delete: the record it updates or deletes. Omit for a create.',
            schema: TxId,
            example: EX_TX2,
          },
        ],
        errors: [
          { 400: { codes: ['PREV_TX_ID_PARAM_MISSING'], why: 'prevTxId is needed to match an update or delete.' } },
        ],
      },
    ),
    navigateLinkedRecords: {
      method: 'get',
      path: '/{txId}/navigate',
      security: 'key',
      summary: 'Walk the chain from txId (excluded).',
      request: {
        params: [txIdParam('The start.')],
        query: [
          {
            name: 'links',
            required: true,
            description:
              'Non-zero integer: the sign is the direction (positive later, negative earlier), the magnitude the maximum count (at most MAX_LINKS).',
            schema: LinksParam,
            example: 10,
          },
        ],
      },
      responses: {
        '200': json('Links.', NavigateResult, { txIds: [EX_TX2], endOfLinks: true, maxLinksRequestable: 1000 }),
      },
      errors: problems(
        READER,
        TX,
        {
          400: {
            codes: ['LINKS_PARAM_INVALID', 'INVALID_NAVIGATION_TRANSACTION_TYPE'],
            why: 'links is not a non-zero integer within MAX_LINKS, or the txId is an independent record.',
          },
        },
        feature('navigate'),
      ),
    },
    linkedRecordReceipt: receiptRoute('linked'),
  },
});

/**
 * The linked records router. Routes parse input, call one use case, map the result. `idempotent`
 * runs on every write after authentication and the body (the `Idempotency-Key` middleware in the
 * app; a no-op by default).
 */
export function linkedRecordsRoutes(
  { reads, writes, receipts }: RecordUseCases,
  auth: RecordsAuth,
  maxRecordBytes: number,
  idempotent: RequestHandler = (_req, _res, next) => next(),
): Router {
  const body = recordBody(maxRecordBytes);
  const updateTokenOf = (req: Request) => queryParam(req, 'updateToken', 'UPDATE_TOKEN_PARAM_INVALID');
  return mountRoutes(LINKED_RECORD_ROUTES, {
    createLinkedRecord: [
      auth.write,
      ...body,
      idempotent,
      answer((req) => writes.createLinked(auth.caller(req), { body: bodyOf(req), encode: encodeOf(req) })),
    ],
    updateLinkedRecord: [
      auth.write,
      ...body,
      idempotent,
      answer((req) =>
        writes.updateLinked(auth.caller(req), req.params['txId'], {
          body: bodyOf(req),
          encode: encodeOf(req),
          updateToken: updateTokenOf(req),
        }),
      ),
    ],
    deleteLinkedRecord: [
      auth.write,
      idempotent,
      answer((req) => writes.deleteLinked(auth.caller(req), req.params['txId'], { updateToken: updateTokenOf(req) })),
    ],
    linkedRecordStatus: [auth.read, answer((req) => reads.status('linked', req.params['txId']))],
    linkedRecordContent: [
      auth.read,
      async (req, res) => {
        sendContent(req, res, await reads.content('linked', req.params['txId']));
      },
    ],
    matchLinkedRecord: [
      auth.read,
      ...body,
      answer((req) =>
        reads.match('linked', req.params['txId'], {
          body: bodyOf(req),
          encode: encodeOf(req),
          prevTxId: queryParam(req, 'prevTxId', 'TX_ID_PARAM_INVALID'),
        }),
      ),
    ],
    navigateLinkedRecords: [
      auth.read,
      answer((req) => reads.navigate(req.params['txId'], queryParam(req, 'links', 'LINKS_PARAM_INVALID'))),
    ],
    linkedRecordReceipt: receiptHandlers(receipts, 'linked', auth),
  });
}
