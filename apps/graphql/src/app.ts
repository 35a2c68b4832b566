import { createYoga } from 'graphql-yoga';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createContext } from './context';
import type { GraphQLContext } from './context';
import type { GraphQLDeps } from './deps';
import { clientErrorCode, maskError } from './errors';
import { requestInputPlugin } from './request-input';
import { buildSchema, schemaLimits } from './schema';

export type GraphQLServer = YogaServerInstance<Record<string, unknown>, GraphQLContext>;

/** The first query GraphiQL shows: runs without a key, and says where the key goes. */
export const GRAPHIQL_DEFAULT_QUERY = `# Proofline GraphQL: health and version need no key.
# For records, blocks, the tip and myBlocks, put your key in
# Headers below: {"x-api-key": "idty_..."}
# Explorer (a record's chain, live confirmations, your blocks): /explorer
# Receipt verifier (in the browser, offline): /verify on the REST API
query Example {
  health
  version
}
`;

/** GraphiQL's prefilled headers: plain ASCII (a browser refuses to send a non-ASCII header value). */
export const GRAPHIQL_HEADERS = JSON.stringify({ 'x-api-key': 'idty_REPLACE_WITH_YOUR_KEY' }, null, 2);

/**
 * GraphiQL rendered with its assets inlined (@graphql-yoga/render-graphiql: the editor, its
 * workers and styles in one page, about 9 MB), so it works with no internet; yoga's default
 * loads them from a CDN. Rendered once: the page is the same for every request.
 */
function offlineGraphiQL(): (opts: Parameters<typeof renderGraphiQL>[0]) => string {
  let html: string | undefined;
  return (opts) => (html ??= renderGraphiQL(opts));
}

/**
 * The yoga instance at /graphql: queries over POST/GET, subscriptions over SSE (accept:
 * text/event-stream). Error masking stays on: only expected AppErrors (status < 500) keep their
 * detail and code; bad input at the HTTP level answers a request error with a code
 * (request-input.ts). GraphiQL (offline assets) is served outside production.
 */
export function createGraphQL(deps: GraphQLDeps, plugins: readonly Plugin[] = []): GraphQLServer {
  const logger = deps.logger;
  return createYoga<Record<string, unknown>, GraphQLContext>({
    plugins: [requestInputPlugin(), ...plugins],
    schema: buildSchema(schemaLimits(deps.config.maxLinks)),
    graphqlEndpoint: '/graphql',
    maskedErrors: { maskError: maskError(logger) },
    graphiql:
      deps.config.nodeEnv !== 'production'
        ? {
            title: 'Proofline GraphQL',
            headers: GRAPHIQL_HEADERS,
            defaultQuery: GRAPHIQL_DEFAULT_QUERY,
            shouldPersistHeaders: false,
          }
        : false,
    renderGraphiQL: offlineGraphiQL(),
    landingPage: false,
    // CORS is the edge's (http.ts, CORS_ORIGINS): yoga's default reflects any Origin with credentials.
    cors: false,
    logging: {
      debug: (...args: unknown[]) => logger.debug({ args }, 'yoga'),
      info: (...args: unknown[]) => logger.info({ args }, 'yoga'),
      warn: (...args: unknown[]) => logger.warn({ args }, 'yoga'),
      // yoga logs every error result: a client's mistake (clientErrorCode) is logged at debug with
      // its code only; error is for server faults (maskError logged their cause already).
      error: (...args: unknown[]) => {
        const codes = args.map(clientErrorCode);
        if (codes.length > 0 && codes.every((c) => c !== undefined)) {
          const err = args.map((a) => (a instanceof Error ? a.message : String(a))).join('; ');
          logger.debug({ errorCode: codes.join(','), err }, 'graphql: request refused');
        } else {
          logger.error({ args }, 'yoga');
        }
      },
    },
    context: ({ request }) => createContext(deps, request.headers),
  });
}
