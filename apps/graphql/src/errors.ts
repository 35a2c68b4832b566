import { GraphQLError } from 'graphql';
import { AppError, badRequest } from '@proofline/shared-errors';
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

function appErrorIn(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let i = 0; i < 5 && current; i++) {
    if (current instanceof AppError) return current;
    current = current instanceof GraphQLError ? current.originalError : undefined;
  }
  return undefined;
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
    if (app && app.httpStatus < 500) {
      return new GraphQLError(app.detail, {
        ...(gql ? { nodes: gql.nodes, path: gql.path } : {}),
        extensions: { code: app.errorCode, status: app.httpStatus },
      });
    }
    if (gql && !gql.originalError) {
      if (gql.extensions['code']) return gql;
      const code = gql.message.startsWith('Syntax Error') ? 'GRAPHQL_PARSE_FAILED' : 'GRAPHQL_VALIDATION_FAILED';
      return new GraphQLError(gql.message, { nodes: gql.nodes, path: gql.path, extensions: { ...gql.extensions, code, status: 400 } });
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
