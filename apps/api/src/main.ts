import cluster from 'node:cluster';
import { followLauncher, loadConfigOrExit, systemClock } from '@proofline/shared-config';
import type { Config } from '@proofline/shared-config';
import { serveMetrics } from '@proofline/shared-http';
import type { MetricsListener } from '@proofline/shared-http';
import { createLogger } from '@proofline/shared-logger';
import type { Logger } from '@proofline/shared-logger';
import { createApp } from './app';
import { clusterMetricsSource, runPrimary } from './cluster';
import { composeApi } from './compose';
import type { ComposedApi } from './compose';
import { createLifecycle } from './lifecycle';
import { listen } from './server';

/** Pause between composition attempts while Redis is away at start. */
const COMPOSE_RETRY_MS = 250;
/**
 * How long a cluster process composes before it starts to accept connections. Its siblings keep
 * serving meanwhile (they share the port), so a replaced process takes no request it would have to
 * answer 503; only when Redis is away this long does it listen not-ready (liveness 200).
 */
const CLUSTER_COMPOSE_BEFORE_LISTEN_MS = 3000;

/**
 * One REST server process. It listens FIRST (liveness 200, readiness 503, other requests 503
 * REDIS_UNAVAILABLE), then composes the app, retrying while Redis is away, and only then serves:
 * a process started during a Redis outage is alive, not ready, and becomes ready by itself within
 * about half a second of Redis coming back.
 */
async function runServer(config: Config, logger: Logger): Promise<void> {
  const inCluster = cluster.isWorker;
  const lifecycle = createLifecycle();
  const metricsPort = config.metrics.apiPort;
  // A cluster process tries to compose before it listens (bounded); a single process listens first.
  const early = inCluster
    ? composeWithin(config, logger, CLUSTER_COMPOSE_BEFORE_LISTEN_MS)
    : Promise.resolve(undefined);
  const earlyComposed = await early;
  const running = await listen(lifecycle.listener, config.host, config.port, logger);
  let composed: ComposedApi | undefined = earlyComposed;
  let metricsListener: MetricsListener | undefined;
  let stopping = false;

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    lifecycle.drain();
    logger.info({ signal }, 'shutting down: readiness 503, finishing in-flight requests');
    await running.close(config.shutdownGraceMs);
    await metricsListener?.close();
    await composed?.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  for (let attempt = 1; !composed && !stopping; attempt++) {
    try {
      composed = await composeApi(config, logger, systemClock);
      break;
    } catch (err) {
      if (attempt === 1 || attempt % 40 === 0)
        logger.warn(
          { err: err instanceof Error ? err.message : String(err), attempt },
          'not ready: composing the app failed (is Redis reachable?); retrying',
        );
      await new Promise((r) => setTimeout(r, COMPOSE_RETRY_MS));
    }
  }
  if (!composed) return;
  if (stopping) {
    await composed.close();
    return;
  }
  const registry = composed.deps.metrics.registry;
  // In a cluster the primary serves METRICS_PORT (aggregated); a single process serves its own.
  const metricsSource = inCluster ? clusterMetricsSource(registry) : registry;
  if (!inCluster && metricsPort !== undefined)
    metricsListener = await serveMetrics(registry, config.metrics.host, metricsPort, logger);
  lifecycle.serve(createApp(composed.deps, { metricsSource }));
  logger.info('ready: serving requests');
}

/** One composition attempt, or undefined when it failed or did not finish within `ms` (then closed when it does). */
async function composeWithin(config: Config, logger: Logger, ms: number): Promise<ComposedApi | undefined> {
  const attempt = composeApi(config, logger, systemClock).then(
    (c) => c,
    () => undefined,
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  const first = await Promise.race([attempt, late]);
  clearTimeout(timer);
  if (first !== 'late') return first;
  // Too slow: the retry loop composes afresh; close this attempt if it still completes.
  void attempt.then((c) => c?.close());
  return undefined;
}

async function main(): Promise<void> {
  const config = loadConfigOrExit('api');
  followLauncher();
  const logger = createLogger({ level: config.logLevel, name: 'api' });
  if (cluster.isPrimary && config.apiProcesses > 1) {
    await runPrimary(config, logger);
    return;
  }
  await runServer(config, cluster.isWorker ? logger.child({ process: cluster.worker?.id }) : logger);
}

main().catch((err: unknown) => {
  process.stderr.write(`proofline api: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
