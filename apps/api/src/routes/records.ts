import express from 'express';
import type { Request, RequestHandler, Response, Router } from 'express';
import { principalOf, requireKey } from '@proofline/identity-feature';
import type { Identity } from '@proofline/identity-feature';
import { AppError } from '@proofline/shared-errors';
import type { Caller, ContentResult, RecordReads, RecordReceipts, RecordWrites } from '@proofline/records-feature';
import {
  EX_ENCODING,
  EX_TX,
  FAMILY,
  READER,
  TX,
  contentRoutes,
  firstWriteRoute,
  json,
  matchRoute,
  problems,
  replayedHeader,
  txIdParam,
} from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';
import { MatchResult, RecordStatus, RecordWriteResult } from '../openapi/schemas';
import { receiptHandlers, receiptRoute } from './receipts';

// The record routes' HTTP plumbing (authentication, body, query parameters, answers), shared with
// linked-records.ts and receipts.ts, then the independent records' routes.

/**
 * How the record routes authenticate (`x-api-key`), supplied by the composition root from the
 * identity feature's middleware. `write` admits Issuer_Admin or Issuer_User; `read` any valid
 * key (reads and match); `caller` returns the authenticated caller's tenant.
 */
export interface RecordsAuth {
  readonly read: RequestHandler;
  readonly write: RequestHandler;
  caller(req: Request): Caller;
}

/** Record auth from the identity API keys: writes need Issuer_Admin or Issuer_User, reads any valid key. */
export function identityRecordsAuth(identity: Pick<Identity, 'authenticator'>): RecordsAuth {
  return {
    read: requireKey(identity.authenticator),
    write: requireKey(identity.authenticator, 'Issuer_Admin', 'Issuer_User'),
    caller: (req) => ({ tenant: principalOf(req).tenant }),
  };
}

/**
 * Reads a record body: raw bytes sent as application/octet-stream, at most `maxBytes`.
 * Another content type: 415 UNSUPPORTED_MEDIA_TYPE; too large: 413 CONTENT_LENGTH_LIMIT_EXCEEDED
 * (before reading when Content-Length says so). An absent body is left to the use case (400).
 */
export function recordBody(maxBytes: number): RequestHandler[] {
  return [
    (req, _res, next) => {
      const length = Number(req.header('content-length') ?? 0);
      const hasBody = length > 0 || req.header('transfer-encoding') !== undefined;
      if (!hasBody) {
        next();
        return;
      }
      if (!req.is('application/octet-stream')) {
        next(
          new AppError({
            errorCode: 'UNSUPPORTED_MEDIA_TYPE',
            httpStatus: 415,
            detail: 'Send the record as raw bytes with Content-Type: application/octet-stream.',
          }),
        );
        return;
      }
      if (length > maxBytes) {
        next(
          new AppError({
            errorCode: 'CONTENT_LENGTH_LIMIT_EXCEEDED',
            httpStatus: 413,
            detail: `A record may be at most ${maxBytes} bytes.`,
          }),
        );
        return;
      }
      next();
    },
    express.raw({ type: 'application/octet-stream', limit: maxBytes }),
  ];
}

/** The records use cases a records router calls. */
export interface RecordUseCases {
  readonly reads: RecordReads;
  readonly writes: RecordWrites;
  readonly receipts?: RecordReceipts;
}

/** The last handler of most record routes: 200 with the JSON of what `run` answers. */
export function answer(run: (req: Request) => Promise<unknown>): RequestHandler {
  return async (req, res) => {
    res.status(200).json(await run(req));
  };
}

/** The `encode` query parameter (a repeated one is 400 ENCODE_PARAM_INVALID). */
export const encodeOf = (req: Request): string | undefined => queryParam(req, 'encode', 'ENCODE_PARAM_INVALID');

/** The parsed raw body, or undefined when none was sent. */
export function bodyOf(req: Request): Buffer | undefined {
  return Buffer.isBuffer(req.body) ? req.body : undefined;
}

/** One query parameter; a repeated one is a 400 with `errorCode`. */
export function queryParam(req: Request, name: string, errorCode: string): string | undefined {
  const value: unknown = (req.query as Record<string, unknown>)[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new AppError({ errorCode, httpStatus: 400, detail: `Query parameter ${name} may be given once.` });
  return value;
}

/**
 * GET and HEAD of a record's content: the exact bytes on chain; ETag = the txId. A txId names its
 * bytes for ever, so a client that already holds them (If-None-Match) gets 304 without a body.
 */
export function sendContent(req: Request, res: Response, content: ContentResult): void {
  const etag = `"${content.txId}"`;
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', 'private, max-age=0, must-revalidate');
  if (ifNoneMatch(req.header('if-none-match'), etag)) {
    res.status(304).end();
    return;
  }
  res.status(200);
  // setHeader, not res.type(): Express would append a charset to text/plain.
  res.setHeader('Content-Type', content.contentType);
  res.setHeader('Content-Length', String(content.bytes.length));
  if (req.method === 'HEAD') res.end();
  else res.end(content.bytes);
}

/** RFC 9110 If-None-Match: `*` or a list of (weak or strong) tags, one of which is `etag`. */
function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** /api/v1/records: independent records (spec §4.2, DESIGN §3). */
const content = contentRoutes('An independent record.', 'The bytes on chain.', problems(READER, TX, FAMILY));

export const RECORD_ROUTES = routeTable({
  base: '/api/v1/records',
  tag: 'Independent records',
  routes: {
    writeRecord: firstWriteRoute(
      'Write an independent record.',
      'an invoice',
      json(
        'Accepted; publication follows asynchronously.',
        RecordWriteResult,
        { txId: EX_TX, encoding: EX_ENCODING },
        replayedHeader(),
      ),
    ),
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
    matchRecord: matchRoute(
      'Does this content match the record?',
      'an invoice',
      json('Match result.', MatchResult, { match: false, confirmation: null }),
    ),
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
