import { followLauncher, loadConfigOrExit, systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { composeWhenRedisAnswers } from '@proofline/shared-redis';
import { createGraphQLDeps } from './deps';
import { listenGraphQL, startGraphQLServer, startingHandler } from './server';

/** Pause between composition attempts while Redis is away at start. */
const COMPOSE_RETRY_MS = 250;

async function main(): Promise<void> {
  const config = loadConfigOrExit('graphql');
  followLauncher();
  const logger = createLogger({ level: config.logLevel, name: 'graphql' });
  // Listen first: a process started while Redis is down answers /liveness 200 and /readiness 503
  // (an orchestrator must not kill it) until the composition below has Redis.
  const early = await listenGraphQL(startingHandler(), config.host, config.graphqlPort, logger);
  let stoppingEarly = false;
  const stopEarly = () => {
    stoppingEarly = true;
    early.close(() => process.exit(0));
    early.closeAllConnections();
  };
  process.once('SIGINT', stopEarly);
  process.once('SIGTERM', stopEarly);
  // The composition root (deps.ts): the same use cases as REST, reads only, and the chain's block
  // port. Retried while Redis is away (one server, or a cluster still forming).
  const deps = await composeWhenRedisAnswers(() => createGraphQLDeps(config, logger, systemClock), {
    stopping: () => stoppingEarly,
    warn: (fields, msg) => logger.warn(fields, msg),
    retryMs: COMPOSE_RETRY_MS,
  });
  process.off('SIGINT', stopEarly);
  process.off('SIGTERM', stopEarly);
  if (!deps || stoppingEarly) {
    await deps?.close();
    return;
  }
  const running = await startGraphQLServer(deps, config, logger, config.graphqlPort, early);
  logger.info(
    {
      port: running.port,
      endpoint: running.yoga.graphqlEndpoint,
      graphiql: config.nodeEnv !== 'production',
      metricsPort: running.metricsListener?.port,
    },
    'listening',
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // SSE subscriptions are long-lived: they are cut after the grace period.
    void running
      .close(config.shutdownGraceMs)
      .then(() => deps.close())
      .finally(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`proofline graphql: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
