import { GraphQLError } from 'graphql';
import { createYoga } from 'graphql-yoga';
import type { YogaServerInstance } from 'graphql-yoga';
import { AppError } from '@proofline/shared-errors';
import { createContext } from './context';
import type { GraphQLContext } from './context';
import type { GraphQLDeps } from './deps';
import { maskError } from './errors';
import { buildSchema, schemaLimits } from './schema';

export type GraphQLServer = YogaServerInstance<Record<string, unknown>, GraphQLContext>;

/**
 * The yoga instance at /graphql: queries over POST/GET, subscriptions over SSE (accept:
 * text/event-stream). Error masking stays on: only expected AppErrors (status < 500) keep their
 * detail and code. GraphiQL is served outside production.
 */
export function createGraphQL(deps: GraphQLDeps): GraphQLServer {
  const logger = deps.logger;
  return createYoga<Record<string, unknown>, GraphQLContext>({
    schema: buildSchema(schemaLimits(deps.config.maxLinks)),
    graphqlEndpoint: '/graphql',
    maskedErrors: { maskError: maskError(logger) },
    graphiql: deps.config.nodeEnv !== 'production' ? { title: 'Proofline GraphQL', headers: JSON.stringify({ 'x-api-key': 'idty_…' }) } : false,
    landingPage: false,
    logging: {
      debug: (...args: unknown[]) => logger.debug({ args }, 'yoga'),
      info: (...args: unknown[]) => logger.info({ args }, 'yoga'),
      warn: (...args: unknown[]) => logger.warn({ args }, 'yoga'),
      // yoga logs every error result; expected ones (status < 500, see maskError) are not server faults.
      error: (...args: unknown[]) =>
        args.some(isExpected)
          ? logger.debug({ args }, 'yoga')
          : logger.error({ args }, 'yoga'),
    },
    context: ({ request }) => createContext(deps, request.headers),
  });
}

/** An error the client caused (status < 500): logged at debug, not error. */
function isExpected(arg: unknown): boolean {
  if (!(arg instanceof GraphQLError)) return false;
  const original = arg.originalError;
  if (original instanceof AppError) return original.httpStatus < 500;
  return Number(arg.extensions['status'] ?? (original ? 500 : 400)) < 500;
}
