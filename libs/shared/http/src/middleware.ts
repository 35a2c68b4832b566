import express from 'express';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, normaliseError, toProblem } from '@proofline/shared-errors';
import { logScope } from '@proofline/shared-logger';
import type { Logger } from '@proofline/shared-logger';
import { bodyBeyondDiscard, discardBody, requestIdOf } from './edge';

declare module 'express-serve-static-core' {
  interface Request {
    /** Request id: from a well-formed `x-request-id` header or generated; echoed in the response. */
    id: string;
    log: Logger;
  }
}

/** When a response's request started (performance.now()), set only when its access line is logged. */
const STARTED_AT = Symbol('proofline.startedAt');
type TimedResponse = Response & { [STARTED_AT]?: number };

/**
 * Assigns a request id (echoed in `x-request-id`), the logger, and the log scope that puts the
 * id on every line logged while the request runs; logs one access line per finished request.
 * The access line is level-gated: when `info` is off (e.g. LOG_LEVEL=warn) a request costs no
 * clock read and no `finish` listener. One shared listener (no closure per request).
 */
export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const id = requestIdOf(req.headers['x-request-id']);
    req.id = id;
    req.log = logger;
    res.setHeader('x-request-id', id);
    if (logger.isLevelEnabled('info')) {
      (res as TimedResponse)[STARTED_AT] = performance.now();
      res.once('finish', logFinished);
    }
    logScope.run({ reqId: id }, next);
  };
}

function logFinished(this: TimedResponse): void {
  const req = this.req;
  const ms = performance.now() - (this[STARTED_AT] ?? 0);
  // Only the path, never the query string: it may carry an updateToken. A refused request's line
  // carries its errorCode: a client's mistake is visible at info, never logged at error.
  const errorCode = (this.locals as { errorCode?: string } | undefined)?.errorCode;
  req.log.info(
    {
      method: req.method,
      path: req.path,
      status: this.statusCode,
      ms: Math.round(ms * 10) / 10,
      ...(errorCode ? { errorCode } : {}),
    },
    'request',
  );
}

/** Sends an error as problem+json; a non-AppError becomes an opaque 500 and is logged in full. */
export function sendProblem(req: Request, res: Response, thrown: unknown): void {
  // Redis unavailability (refused, reset, timed out, LOADING, READONLY, ...) is mapped here, once: 503 REDIS_UNAVAILABLE.
  const error = normaliseError(thrown);
  const problem = toProblem(error, req.originalUrl.split('?')[0]);
  res.locals['errorCode'] = problem.errorCode;
  if (error instanceof AppError && error.errorCode === 'REDIS_UNAVAILABLE') {
    // An outage answers many requests at once: one warn line each, without a stack.
    req.log?.warn({ errorCode: error.errorCode, internal: error.internalDetail }, 'request refused: redis unavailable');
  } else if (error instanceof AppError && problem.status === 503 && error.headers['Retry-After'] !== undefined) {
    // Back-pressure the service means (a pool refilling, a full backlog): the client is told when
    // to retry. A warn line without a stack, not an error an operator is paged for.
    req.log?.warn({ errorCode: error.errorCode, internal: error.internalDetail }, 'request refused: retry later');
  } else if (problem.status >= 500) {
    (req.log ?? console).error({ err: error }, 'request failed');
  } else if (error instanceof AppError && error.internalDetail) {
    req.log?.info({ errorCode: error.errorCode, internal: error.internalDetail }, 'request refused');
  }
  if (error instanceof AppError) {
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  }
  if (res.headersSent) {
    res.end();
    return;
  }
  // A body not read yet (refused before its parser ran, e.g. 401 or 413 by Content-Length) is
  // drained after the answer, so a client still sending gets the answer and not a reset.
  const unread = !req.complete;
  if (unread && bodyBeyondDiscard(req)) res.setHeader('connection', 'close');
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
  if (unread) discardBody(req);
}

/**
 * Final error handler. Maps body-parser failures (bad JSON, too large, bad charset) to 4xx
 * problems so that no malformed request ever yields a 5xx.
 */
export function problemHandler(): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    sendProblem(req, res, mapFrameworkError(err));
  };
}

/** 404 for any route nobody handled. */
export function notFoundHandler(): RequestHandler {
  return (req, res) => {
    sendProblem(
      req,
      res,
      new AppError({ errorCode: 'ROUTE_NOT_FOUND', httpStatus: 404, detail: `No route for ${req.method} ${req.path}` }),
    );
  };
}

function mapFrameworkError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; statusCode?: number; message?: string };
  const status = e?.status ?? e?.statusCode;
  switch (e?.type) {
    case 'entity.parse.failed':
      return new AppError({
        errorCode: 'BODY_INVALID_JSON',
        httpStatus: 400,
        detail: 'The request body is not valid JSON.',
        cause: err,
      });
    case 'entity.too.large':
      return new AppError({
        errorCode: 'CONTENT_LENGTH_LIMIT_EXCEEDED',
        httpStatus: 413,
        detail: 'The request body is too large.',
        cause: err,
      });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError({
        errorCode: 'UNSUPPORTED_MEDIA_TYPE',
        httpStatus: 415,
        detail: 'The request body encoding or charset is not supported.',
        cause: err,
      });
    case 'request.aborted':
      return new AppError({
        errorCode: 'REQUEST_ABORTED',
        httpStatus: 400,
        detail: 'The request was aborted by the client.',
        cause: err,
      });
    default:
      if (typeof status === 'number' && status >= 400 && status < 500) {
        return new AppError({
          errorCode: 'BAD_REQUEST',
          httpStatus: status,
          detail: 'The request could not be read.',
          cause: err,
        });
      }
      return err;
  }
}

/**
 * JSON body parser for key endpoints: strict JSON objects/arrays, a small size limit, and a
 * 415 when a body is sent with another content type.
 */
export function jsonBody(limit = '16kb'): RequestHandler[] {
  return [
    express.json({ limit, strict: true, type: ['application/json', 'application/*+json'] }),
    (req, _res, next) => {
      const hasBody = Number(req.header('content-length') ?? 0) > 0 || req.header('transfer-encoding') !== undefined;
      if (hasBody && !req.is(['application/json', 'application/*+json'])) {
        next(
          new AppError({
            errorCode: 'UNSUPPORTED_MEDIA_TYPE',
            httpStatus: 415,
            detail: 'Send the body as application/json.',
          }),
        );
        return;
      }
      next();
    },
  ];
}
