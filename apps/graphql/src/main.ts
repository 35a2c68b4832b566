import http from 'node:http';
import { loadConfigOrExit, systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { createGraphQL } from './app';
import { createGraphQLDeps } from './deps';
import { httpHandler } from './http';

async function main(): Promise<void> {
  const config = loadConfigOrExit('graphql');
  const logger = createLogger({ level: config.logLevel, name: 'graphql' });
  // The same use cases as REST (apps/api/src/main.ts): RecordsService, IdentityService, the devnet reader.
  const deps = await createGraphQLDeps(config, logger, systemClock);
  const yoga = createGraphQL(deps);
  const server = http.createServer(httpHandler(deps.redis, (req, res) => yoga.handle(req, res)));
  await new Promise<void>((resolve) => server.listen(config.graphqlPort, config.host, resolve));
  logger.info({ port: config.graphqlPort, endpoint: yoga.graphqlEndpoint, graphiql: config.nodeEnv !== 'production' }, 'listening');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // SSE subscriptions are long-lived: after the grace period they are cut.
    const force = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
    force.unref();
    server.close(() => {
      void deps.close().finally(() => process.exit(0));
    });
    server.closeIdleConnections();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`proofline graphql: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
