import { z } from 'zod';
import { parseTxId } from '@proofline/records-domain';
import { blockKeyOf, positionOf } from '../cursor';
import type { CursorKind } from '../cursor';
import { InvalidArgumentError, NotFoundError } from '../errors';
import type { Builder, SchemaLimits } from './builder';

export interface PageInfoShape {
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  readonly startCursor: string | null;
  readonly endCursor: string | null;
}

/** Relay page arguments after validation: exactly one of first/last, positions decoded. */
export interface PageArgs {
  readonly first?: number;
  readonly last?: number;
  readonly after?: number;
  readonly before?: number;
}

/** A txId argument: the same rule as REST (`parseTxId`: 64 hex characters). */
export const txIdSchema = z.string().refine((v) => {
  try {
    parseTxId(v);
    return true;
  } catch {
    return false;
  }
}, 'must be 64 hexadecimal characters.');

export function pageSizeSchema(limits: SchemaLimits) {
  return z
    .number()
    .int()
    .min(1, `must be between 1 and ${limits.maxPageSize}`)
    .max(limits.maxPageSize, `must be between 1 and ${limits.maxPageSize}`)
    .nullish();
}

/** A cursor of connection `kind` (`block`: the keyset cursors of `myBlocks`). */
export function cursorSchema(kind: CursorKind | 'block') {
  return z
    .string()
    .refine(
      (c) => (kind === 'block' ? blockKeyOf(c) : positionOf(kind, c)) !== null,
      'is not a cursor of this connection (use the cursors this API returned)',
    )
    .nullish();
}

/** Validates connection arguments together: at most one of first/last. */
export function pageArgsSchema(limits: SchemaLimits, kind: CursorKind | 'block') {
  return z
    .object({
      first: pageSizeSchema(limits),
      last: pageSizeSchema(limits),
      after: cursorSchema(kind),
      before: cursorSchema(kind),
    })
    .refine((a) => a.first == null || a.last == null, {
      message: 'and last may not be given together.',
      path: ['first'],
    });
}

/** Decoded page arguments (cursors already validated), with the default page size. */
export function toPageArgs(
  kind: CursorKind,
  limits: SchemaLimits,
  args: { first?: number | null; last?: number | null; after?: string | null; before?: string | null },
): PageArgs {
  const after = args.after == null ? undefined : (positionOf(kind, args.after) ?? undefined);
  const before = args.before == null ? undefined : (positionOf(kind, args.before) ?? undefined);
  const size = args.last == null ? { first: args.first ?? limits.defaultPageSize } : { last: args.last };
  return { ...size, ...(after === undefined ? {} : { after }), ...(before === undefined ? {} : { before }) };
}

/** Complexity of a connection: its page size multiplies its selection (clamped: validation answers bad sizes). */
export function connectionComplexity(limits: SchemaLimits) {
  return (args: { first?: number | null; last?: number | null }) => {
    const n = args.first ?? args.last ?? limits.defaultPageSize;
    return { field: 1, multiplier: Math.min(Math.max(n, 1), limits.maxPageSize) };
  };
}

export function addCommonTypes(builder: Builder) {
  const PageInfo = builder.objectRef<PageInfoShape>('PageInfo').implement({
    description: 'Relay page information.',
    fields: (t) => ({
      hasNextPage: t.exposeBoolean('hasNextPage'),
      hasPreviousPage: t.exposeBoolean('hasPreviousPage'),
      startCursor: t.exposeString('startCursor', { nullable: true }),
      endCursor: t.exposeString('endCursor', { nullable: true }),
    }),
  });

  const UserError = builder.interfaceRef<NotFoundError | InvalidArgumentError>('UserError').implement({
    description: 'An expected failure, returned as data. `code` is the errorCode REST uses for the same case.',
    fields: (t) => ({
      code: t.exposeString('code'),
      message: t.exposeString('message'),
    }),
  });
  builder.objectType(NotFoundError, {
    name: 'NotFoundError',
    interfaces: [UserError],
    description: 'Nothing exists with that id (TX_NOT_FOUND, BLOCK_NOT_FOUND).',
  });
  builder.objectType(InvalidArgumentError, {
    name: 'InvalidArgumentError',
    interfaces: [UserError],
    description: 'A well-formed argument the use case refused, e.g. TX_INCORRECT_EVENT_TRANSACTION_TYPE.',
  });
  return { PageInfo };
}

/** Page info of a window [start, start + count) of `total` items. */
export function pageInfo(
  kind: CursorKind,
  start: number,
  count: number,
  total: number,
  cursor: (kind: CursorKind, n: number) => string,
): PageInfoShape {
  return {
    hasPreviousPage: start > 0 && total > 0,
    hasNextPage: start + count < total,
    startCursor: count > 0 ? cursor(kind, start) : null,
    endCursor: count > 0 ? cursor(kind, start + count - 1) : null,
  };
}
