import { randomUUID } from 'node:crypto';
import { createYoga } from 'graphql-yoga';
import type { YogaServerInstance } from 'graphql-yoga';
import type { Config } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import { buildSchema } from './schema';
import type { GraphQLContext } from './schema';

export interface GraphQLDeps {
  readonly config: Config;
  readonly logger: Logger;
}

/** The yoga instance; error masking stays on so internal messages never reach a client. */
export function createGraphQL(deps: GraphQLDeps): YogaServerInstance<Record<string, unknown>, GraphQLContext> {
  return createYoga<Record<string, unknown>, GraphQLContext>({
    schema: buildSchema(),
    graphqlEndpoint: '/graphql',
    maskedErrors: true,
    graphiql: deps.config.nodeEnv !== 'production',
    landingPage: false,
    logging: {
      debug: (...args: unknown[]) => deps.logger.debug({ args }, 'yoga'),
      info: (...args: unknown[]) => deps.logger.info({ args }, 'yoga'),
      warn: (...args: unknown[]) => deps.logger.warn({ args }, 'yoga'),
      error: (...args: unknown[]) => deps.logger.error({ args }, 'yoga'),
    },
    context: ({ request }) => ({ requestId: request.headers.get('x-request-id') ?? randomUUID() }),
  });
}
