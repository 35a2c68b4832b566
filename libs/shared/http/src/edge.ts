import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import express from 'express';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, normaliseError, toProblem } from '@proofline/shared-errors';
import { logScope } from '@proofline/shared-logger';
import type { Logger } from '@proofline/shared-logger';

// The HTTP edge shared by the REST (Express) and the GraphQL (node:http + yoga) servers, so both
// answer the same way. First the protocol-level refusals: everything Node's HTTP server would
// otherwise answer itself (a bare status line without a body, an errorCode or a request id, or a
// dropped connection) is answered as problem+json. Then the server, CORS and the metrics
// listener; last the Express middleware around the routes (request context and access log,
// problem+json answers, body parsing).

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The request id of a request: a well-formed incoming `x-request-id` (echoed) or a new UUID. */
export function requestIdOf(header: string | string[] | undefined): string {
  const incoming = Array.isArray(header) ? header[0] : header;
  return incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * How much of an unwanted request body (answered before it was read: too large, refused) is read
 * and thrown away before the connection is closed. A socket closed while the client is still
 * sending is reset by the kernel, and the reset can reach the client before the answer does; so
 * the rest of the body is drained first. Beyond this bound the connection is closed at once.
 */
export const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024;

/** A protocol-level refusal: its status, errorCode and the problem's title and detail. */
export interface ProtocolRefusal {
  readonly status: number;
  readonly errorCode: string;
  readonly title: string;
  readonly detail: string;
}

/** The RFC 7807 problem of a refusal (the same shape `toProblem` gives every other error). */
export function refusalProblem(refusal: ProtocolRefusal): Record<string, string | number> {
  const { status, errorCode, title, detail } = refusal;
  return { type: `https://proofline.dev/problems/${errorCode}`, title, status, detail, errorCode };
}

function refusalBody(refusal: ProtocolRefusal): string {
  return JSON.stringify(refusalProblem(refusal));
}

/** Status and errorCode of a request Node's HTTP parser refused, by the parser's error code. */
export function parserRefusal(code: string | undefined): ProtocolRefusal {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        errorCode: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
        title: 'Request Header Fields Too Large',
        detail: 'The request line and headers are larger than the server accepts (16 KiB).',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        errorCode: 'REQUEST_TIMEOUT',
        title: 'Request Timeout',
        detail: 'The request was not received in time.',
      };
    default:
      return {
        status: 400,
        errorCode: 'BAD_REQUEST',
        title: 'Bad Request',
        detail: 'The HTTP request could not be parsed.',
      };
  }
}

const EXPECTATION_FAILED: ProtocolRefusal = {
  status: 417,
  errorCode: 'EXPECTATION_FAILED',
  title: 'Expectation Failed',
  detail: 'Only "Expect: 100-continue" is supported.',
};

const HOST_MISSING: ProtocolRefusal = {
  status: 400,
  errorCode: 'BAD_REQUEST',
  title: 'Bad Request',
  detail: 'An HTTP/1.1 request must carry a Host header.',
};

const CONNECT_REFUSED: ProtocolRefusal = {
  status: 405,
  errorCode: 'METHOD_NOT_ALLOWED',
  title: 'Method Not Allowed',
  detail: 'CONNECT is not supported: this is not a proxy.',
};

/**
 * The raw bytes of a refusal written straight to a socket (no request or response object exists).
 * An answer to HEAD MUST NOT carry the body (a client would read it as the next answer).
 */
function rawAnswer(refusal: ProtocolRefusal, id: string, head = false): string {
  const body = refusalBody(refusal);
  return (
    `HTTP/1.1 ${refusal.status} ${refusal.title}\r\nContent-Type: application/problem+json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${head ? '' : body}`
  );
}

/** The response a socket is writing, when one is in flight (Node keeps it as `_httpMessage`). */
function inFlight(socket: Duplex): { headersSent?: boolean } | undefined {
  return (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage ?? undefined;
}

/**
 * A `clientError` listener: requests Node's HTTP parser refused (bad request line, headers over
 * `maxHeaderSize`, a header timeout) get a short problem+json with an `errorCode` and an
 * `x-request-id`, then the connection is closed. When the socket can no longer be written (reset,
 * half-closed) or a response is already on the wire (a pipelined request's answer), it is only
 * destroyed: writing then would corrupt what the client is reading. Logged at info: the client's
 * fault, never the server's.
 */
export function onClientError(logger: Logger): (err: Error & { code?: string }, socket: Duplex) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight(socket)?.headersSent) {
      socket.destroy();
      return;
    }
    const refusal = parserRefusal(err.code);
    const id = randomUUID();
    logger.info(
      { reqId: id, status: refusal.status, errorCode: refusal.errorCode, parser: err.code },
      'request refused by the HTTP parser',
    );
    // The parser keeps the bytes it refused: a HEAD request's answer has no body.
    const head = (err as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    socket.end(rawAnswer(refusal, id, head));
  };
}

/**
 * Reads and discards the rest of a request body that was answered without being read, up to
 * {@link DISCARD_LIMIT_BYTES}, so the answer reaches a client that is still sending (see there).
 * The connection stays usable when the body ends within the bound; beyond it, it is destroyed.
 */
export function discardBody(req: IncomingMessage, limit = DISCARD_LIMIT_BYTES): void {
  if (req.complete || req.readableEnded || req.destroyed) return;
  let seen = 0;
  const onData = (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > limit) {
      req.off('data', onData);
      req.socket.destroy();
    }
  };
  req.on('data', onData);
  req.resume();
}

/**
 * True when a request's remaining body is over {@link DISCARD_LIMIT_BYTES} by its own
 * Content-Length: its answer MUST say `Connection: close` (it will not be drained).
 */
export function bodyBeyondDiscard(req: IncomingMessage): boolean {
  return Number(req.headers['content-length'] ?? 0) > DISCARD_LIMIT_BYTES;
}

/**
 * Answers a refusal on a request that got a response object (before the request listener ran):
 * problem+json, the request id echoed, the unread body drained ({@link discardBody}).
 */
function answer(req: IncomingMessage, res: ServerResponse, refusal: ProtocolRefusal, logger: Logger): void {
  const id = requestIdOf(req.headers['x-request-id']);
  const body = refusalBody(refusal);
  logger.info(
    { reqId: id, method: req.method, status: refusal.status, errorCode: refusal.errorCode },
    'request refused by the HTTP edge',
  );
  res.writeHead(refusal.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': id,
    ...(bodyBeyondDiscard(req) ? { connection: 'close' } : {}),
  });
  res.end(body);
  discardBody(req);
}

/**
 * Wraps a request listener with the checks Node would otherwise answer with a bare status line:
 * an HTTP/1.1 request without `Host` is a 400 problem+json (the server is created with
 * `requireHostHeader: false` so the check happens here, see {@link createEdgeServer}).
 */
export function guardRequests(listener: RequestListener, logger: Logger): RequestListener {
  return (req, res) => {
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      answer(req, res, HOST_MISSING, logger);
      return;
    }
    listener(req, res);
  };
}

/** Server timeouts both public servers use (keep-alive below a load balancer's idle timeout). */
export interface EdgeTimeouts {
  readonly keepAliveMs?: number;
  readonly headersMs?: number;
  readonly requestMs?: number;
}

/**
 * The public HTTP server of an app, not yet listening: `listener` behind {@link guardRequests};
 * parser refusals ({@link onClientError}), an `Expect` other than `100-continue` (417
 * EXPECTATION_FAILED) and `CONNECT` (405 METHOD_NOT_ALLOWED) answered as problem+json with an
 * `x-request-id`, where Node would send a bare status line or drop the connection.
 */
export function createEdgeServer(listener: RequestListener, logger: Logger, timeouts: EdgeTimeouts = {}): http.Server {
  const server = http.createServer({ requireHostHeader: false }, guardRequests(listener, logger));
  server.keepAliveTimeout = timeouts.keepAliveMs ?? 5000;
  server.headersTimeout = timeouts.headersMs ?? 10_000;
  server.requestTimeout = timeouts.requestMs ?? 60_000;
  server.on('clientError', onClientError(logger));
  server.on('checkExpectation', (req, res) => answer(req, res, EXPECTATION_FAILED, logger));
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const id = requestIdOf(req.headers['x-request-id']);
    logger.info(
      { reqId: id, method: req.method, status: 405, errorCode: CONNECT_REFUSED.errorCode },
      'request refused',
    );
    socket.on('error', () => undefined);
    socket.end(rawAnswer(CONNECT_REFUSED, id));
  });
  return server;
}

// CORS and the internal /metrics listener, on the same edge server.

/** Headers a browser may send cross-origin, and response headers it may read. */
const ALLOWED_HEADERS = 'authorization, content-type, x-api-key, x-request-id';
const EXPOSED_HEADERS = 'x-request-id, retry-after, location';

/**
 * CORS response headers for a request, or `undefined` when the request gets none.
 *
 * Off unless `origins` lists origins; a listed `Origin` is echoed exactly (never `*`, never an
 * unlisted origin) and `access-control-allow-credentials` is never sent: the APIs authenticate by
 * header (`x-api-key`, `authorization`), not by cookie, so a page can never ride on a browser's
 * ambient credentials. A preflight (`OPTIONS` with `access-control-request-method`) additionally
 * gets the allowed methods and headers.
 */
export function corsHeaders(
  origins: readonly string[],
  method: string,
  headers: IncomingHttpHeaders,
  methods: string,
): Record<string, string> | undefined {
  const origin = headers.origin;
  if (origins.length === 0 || origin === undefined || !origins.includes(origin)) return undefined;
  const out: Record<string, string> = {
    'access-control-allow-origin': origin,
    vary: 'origin',
    'access-control-expose-headers': EXPOSED_HEADERS,
  };
  if (method === 'OPTIONS' && headers['access-control-request-method'] !== undefined) {
    out['access-control-allow-methods'] = methods;
    out['access-control-allow-headers'] = ALLOWED_HEADERS;
    out['access-control-max-age'] = '600';
  }
  return out;
}

/** True for a CORS preflight: answered 204 by the edge, never routed. */
export function isPreflight(method: string, headers: IncomingHttpHeaders): boolean {
  return method === 'OPTIONS' && headers.origin !== undefined && headers['access-control-request-method'] !== undefined;
}

/**
 * Express middleware applying {@link corsHeaders}; preflights end here with 204 (a preflight from
 * an unlisted origin also gets 204, without CORS headers, so the browser refuses the call).
 */
export function cors(origins: readonly string[], methods = 'GET, POST, PUT, PATCH, DELETE'): RequestHandler {
  return (req, res, next) => {
    if (origins.length > 0) res.setHeader('vary', 'origin');
    const headers = corsHeaders(origins, req.method, req.headers, methods);
    if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (isPreflight(req.method, req.headers)) {
      res.status(204).end();
      return;
    }
    next();
  };
}

/** What {@link serveMetrics} reads: a prom-client Registry fits. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export interface MetricsListener {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The internal `/metrics` listener (`METRICS_PORT` / `GRAPHQL_METRICS_PORT`): only `GET /metrics`,
 * everything else 404. Rejects (EADDRINUSE) when the port is taken, so two processes configured
 * with the same port fail at start instead of one silently serving the other's figures.
 */
export async function serveMetrics(
  source: MetricsSource,
  host: string,
  port: number,
  logger: Logger,
): Promise<MetricsListener> {
  const server = createEdgeServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res
        .writeHead(404, { 'content-type': 'application/problem+json' })
        .end(JSON.stringify({ title: 'Not Found', status: 404, errorCode: 'ROUTE_NOT_FOUND' }));
      return;
    }
    source.metrics().then(
      (text) => res.writeHead(200, { 'content-type': source.contentType }).end(text),
      (err: unknown) => {
        logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'metrics could not be collected');
        res
          .writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '5' })
          .end(JSON.stringify({ title: 'Service Unavailable', status: 503, errorCode: 'METRICS_UNAVAILABLE' }));
      },
    );
  }, logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  logger.info({ host, port: actual }, 'metrics listening');
  return {
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

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
