import { GraphQLError } from 'graphql';
import {
  AppError,
  REDIS_RETRY_AFTER_SECONDS,
  badRequest,
  normaliseError,
  redisFailureIn,
} from '@proofline/shared-errors';
import type { Logger } from '@proofline/shared-logger';

/**
 * Expected failures of a root field, returned as typed results (`@pothos/plugin-errors`):
 * `... on NotFoundError { code message }`. `code` is the REST errorCode (TX_NOT_FOUND, …).
 */
export class NotFoundError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'NotFoundError';
  }
}

/** A well-formed argument that the use case refused (e.g. a txId of the other record family). */
export class InvalidArgumentError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'InvalidArgumentError';
  }
}

/** Runs a use case and turns its expected 404/400 AppErrors into typed results; anything else is rethrown. */
export async function typed<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError && err.httpStatus === 404) throw new NotFoundError(err.errorCode, err.detail);
    if (err instanceof AppError && err.httpStatus === 400) throw new InvalidArgumentError(err.errorCode, err.detail);
    throw err;
  }
}

/**
 * Stable `extensions.code` of an argument that failed validation, by argument name. The codes of
 * REST are reused where REST has the same parameter (txId).
 */
export const ARGUMENT_CODES: Readonly<Record<string, string>> = {
  txId: 'TX_ID_PARAM_INVALID',
  hash: 'BLOCK_HASH_PARAM_INVALID',
  height: 'BLOCK_HEIGHT_PARAM_INVALID',
  block: 'BLOCK_SELECTOR_INVALID',
  first: 'PAGE_SIZE_INVALID',
  last: 'PAGE_SIZE_INVALID',
  after: 'CURSOR_INVALID',
  before: 'CURSOR_INVALID',
  depth: 'DEPTH_PARAM_INVALID',
};

interface Issue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The AppError (400) for failed argument validation: the first issue decides the code. */
export function argumentError(issues: readonly Issue[]): AppError {
  const first = issues[0];
  const head = first?.path?.[0];
  const name = head === undefined ? '' : String(typeof head === 'object' ? head.key : head);
  const detail =
    issues
      .map((i) => {
        const arg = i.path?.[0];
        const argName = arg === undefined ? '' : String(typeof arg === 'object' ? arg.key : arg);
        return argName && argName !== 'block' ? `${argName} ${i.message}` : i.message;
      })
      .join('; ') || 'Invalid argument.';
  return badRequest(ARGUMENT_CODES[name] ?? 'ARGUMENT_INVALID', detail);
}

/**
 * A variable value graphql-js refused before execution (wrong type, missing, not coercible): such
 * an error has no path and graphql-js's "Variable "$name" …" message; its originalError is the
 * scalar's refusal, not a server fault.
 */
function isVariableError(error: GraphQLError): boolean {
  return error.path === undefined && error.message.startsWith('Variable "$');
}

function appErrorIn(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let i = 0; i < 5 && current; i++) {
    if (current instanceof AppError) return current;
    current = current instanceof GraphQLError ? current.originalError : undefined;
  }
  return undefined;
}

/**
 * The code of an error yoga reports that is not a server fault, or `undefined` for a fault: an
 * AppError below 500, a variable graphql-js refused, a request error yoga marks with an HTTP
 * status below 500 (bad JSON, bad parameters), a syntax or validation error (no original error);
 * and a Redis outage (`REDIS_UNAVAILABLE`: logged once at warn by {@link maskError}).
 */
export function clientErrorCode(error: unknown): string | undefined {
  if (!(error instanceof GraphQLError)) return undefined;
  if (redisFailureIn(error.originalError)) return 'REDIS_UNAVAILABLE';
  const app = appErrorIn(error);
  if (app) return app.httpStatus < 500 ? app.errorCode : undefined;
  if (isVariableError(error)) return 'BAD_USER_INPUT';
  const code = typeof error.extensions['code'] === 'string' ? error.extensions['code'] : 'BAD_REQUEST';
  const http = error.extensions['http'] as { status?: unknown } | undefined;
  const status = Number(http?.status ?? error.extensions['status'] ?? (error.originalError ? 500 : 400));
  return status < 500 ? code : undefined;
}

/**
 * yoga's `maskError`: an AppError with status < 500 keeps its detail, `extensions.code`
 * (= errorCode) and `extensions.status`; GraphQL's own request errors (syntax, validation, variable
 * coercion) pass unchanged with a code; everything else becomes "Unexpected error." (code
 * INTERNAL_SERVER_ERROR) and is logged here with its real cause.
 */
export function maskError(logger: Logger) {
  return (error: unknown): Error => {
    const gql = error instanceof GraphQLError ? error : undefined;
    const app = appErrorIn(error);
    // Redis unavailable (refused, reset, timed out, LOADING, READONLY): the same mapping as REST
    // (shared-errors), answered as extensions.code REDIS_UNAVAILABLE with HTTP 503 + Retry-After.
    const unavailable = app && app.httpStatus < 500 ? undefined : normaliseError(gql?.originalError ?? error);
    if (unavailable instanceof AppError && unavailable.errorCode === 'REDIS_UNAVAILABLE') {
      logger.warn({ path: gql?.path?.join('.'), internal: unavailable.internalDetail }, 'graphql: redis unavailable');
      return new GraphQLError(unavailable.detail, {
        ...(gql ? { nodes: gql.nodes, path: gql.path } : {}),
        extensions: {
          code: 'REDIS_UNAVAILABLE',
          status: 503,
          http: { status: 503, headers: { 'retry-after': String(REDIS_RETRY_AFTER_SECONDS) } },
        },
      });
    }
    if (app && app.httpStatus < 500) {
      return new GraphQLError(app.detail, {
        ...(gql ? { nodes: gql.nodes, path: gql.path } : {}),
        extensions: { code: app.errorCode, status: app.httpStatus },
      });
    }
    if (gql && isVariableError(gql)) {
      // graphql-js's own message ("Variable "$t" got invalid value 1; String cannot represent a
      // non string value: 1"): the client's input, never a fault. Its originalError is dropped.
      return new GraphQLError(gql.message, {
        nodes: gql.nodes,
        extensions: { code: 'BAD_USER_INPUT', status: 400, http: { spec: true, status: 400 } },
      });
    }
    if (gql && !gql.originalError) {
      // yoga's invalid-JSON error carries `extensions.originalError` (the JSON parser's name and
      // message): never shown, in any environment. A body that is not JSON is not a well-formed
      // GraphQL-over-HTTP request: 400 whatever the Accept header (yoga answered 200 to
      // application/json).
      const { originalError: hidden, ...extensions } = gql.extensions;
      if (hidden !== undefined) {
        return new GraphQLError(gql.message, {
          nodes: gql.nodes,
          path: gql.path,
          extensions: { ...extensions, code: extensions['code'] ?? 'BAD_REQUEST', http: { status: 400 } },
        });
      }
      if (extensions['code']) return gql;
      const code = gql.message.startsWith('Syntax Error') ? 'GRAPHQL_PARSE_FAILED' : 'GRAPHQL_VALIDATION_FAILED';
      return new GraphQLError(gql.message, {
        nodes: gql.nodes,
        path: gql.path,
        extensions: { ...extensions, code, status: 400 },
      });
    }
    const cause = app ?? gql?.originalError ?? error;
    logger.error(
      {
        path: gql?.path?.join('.'),
        err: cause instanceof Error ? cause.message : String(cause),
        internal: app?.internalDetail,
        stack: cause instanceof Error ? cause.stack : undefined,
      },
      'graphql: unexpected error (masked)',
    );
    return new GraphQLError('Unexpected error.', {
      ...(gql ? { nodes: gql.nodes, path: gql.path } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR', status: 500 },
    });
  };
}
