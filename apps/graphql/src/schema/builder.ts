import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import ValidationPlugin from '@pothos/plugin-validation';
import { AppError } from '@proofline/shared-errors';
import type { GraphQLContext } from '../context';
import { argumentError } from '../errors';

export interface BuilderTypes {
  Context: GraphQLContext;
  DefaultFieldNullability: false;
}

export type Builder = PothosSchemaTypes.SchemaBuilder<PothosSchemaTypes.ExtendDefaultTypes<BuilderTypes>>;

/** The limits a schema is built with (see README: "Limits"). */
export interface SchemaLimits {
  /** Largest `first`/`last` of a connection (MAX_LINKS, default 1000). */
  readonly maxPageSize: number;
  /** Page size when neither `first` nor `last` is given. */
  readonly defaultPageSize: number;
  /** Largest confirmation depth a subscription may wait for. */
  readonly maxDepth: number;
  readonly maxComplexity: number;
  readonly maxQueryDepth: number;
  readonly maxBreadth: number;
}

/** Defaults derived from the page size: a full page of records with content and proofs fits the complexity budget. */
export function schemaLimits(maxPageSize: number): SchemaLimits {
  return {
    maxPageSize,
    defaultPageSize: Math.min(DEFAULT_PAGE_SIZE, maxPageSize),
    maxDepth: 100,
    maxComplexity: 50 * maxPageSize,
    maxQueryDepth: 10,
    maxBreadth: 250,
  };
}

/** Page size when neither first nor last is given (also in the schema's descriptions). */
export const DEFAULT_PAGE_SIZE = 50;

const COMPLEXITY_CODES = {
  depth: 'QUERY_TOO_DEEP',
  breadth: 'QUERY_TOO_BROAD',
  complexity: 'QUERY_TOO_COMPLEX',
} as const;

export function createBuilder(limits: SchemaLimits): Builder {
  return new SchemaBuilder<BuilderTypes>({
    // errors before dataloader (typed errors of loaded fields), validation after both.
    plugins: [ErrorsPlugin, DataloaderPlugin, ValidationPlugin, ComplexityPlugin],
    // Fields are non-null unless marked; root fields are nullable so that one failing field
    // (an auth error, say) does not null the others.
    defaultFieldNullability: false,
    errors: { defaultTypes: [] },
    validation: {
      validationError: (failure) => argumentError(failure.issues),
    },
    complexity: {
      defaultComplexity: 1,
      defaultListMultiplier: 10,
      limit: { complexity: limits.maxComplexity, depth: limits.maxQueryDepth, breadth: limits.maxBreadth },
      complexityError: (kind, result) => {
        const which = String(kind).toLowerCase() as keyof typeof COMPLEXITY_CODES;
        const [actual, max] =
          which === 'depth'
            ? [result.depth, result.maxDepth]
            : which === 'breadth'
              ? [result.breadth, result.maxBreadth]
              : [result.complexity, result.maxComplexity];
        return new AppError({
          errorCode: COMPLEXITY_CODES[which] ?? 'QUERY_TOO_COMPLEX',
          httpStatus: 400,
          detail: `The query's ${which} is ${actual}; at most ${max ?? '?'} is allowed. Ask for fewer fields or smaller pages.`,
        });
      },
    },
  });
}
