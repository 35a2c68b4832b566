import {
  CONFIG_ERROR_EXIT,
  followLauncher,
  loadConfigOrExit,
  reusePortProblem,
  systemClock,
} from '@proofline/shared-config';
import type { Config } from '@proofline/shared-config';
import { serveMetrics } from '@proofline/shared-http';
import { composeWhenRedisAnswers } from '@proofline/shared-redis';
import type { MetricsListener } from '@proofline/shared-http';
import { createLogger } from '@proofline/shared-logger';
import type { Logger } from '@proofline/shared-logger';
import { createApp } from './app';
import { composeApi } from './compose';
import type { ComposedApi } from './compose';
import { createLifecycle } from './lifecycle';
import { listen } from './server';

/** Pause between composition attempts while Redis is away at start. */
const COMPOSE_RETRY_MS = 250;
/**
 * How long a process that shares its port composes before it starts to accept connections. Its
 * siblings keep serving meanwhile, so a restarted process takes no request it would have to answer
 * 503; only when Redis is away this long does it listen not-ready (liveness 200).
 */
const SHARED_COMPOSE_BEFORE_LISTEN_MS = 3000;

/**
 * One REST server process. With `API_PROCESSES` > 1 it is one of that many independent
 * processes (the launcher runs and restarts each): every one listens on `PORT` with `reusePort`
 * (SO_REUSEPORT), so the kernel spreads connections over them and a killed one takes only the
 * requests it had in hand; no process owns the socket for the others. A process alone listens
 * FIRST (liveness 200, readiness 503, other requests 503 REDIS_UNAVAILABLE), then composes the
 * app, retrying while Redis is away, and only then serves: a process started during a Redis
 * outage is alive, not ready, and becomes ready by itself within about half a second of Redis
 * coming back.
 */
async function runServer(config: Config, logger: Logger): Promise<void> {
  const shared = config.apiProcesses > 1;
  const lifecycle = createLifecycle();
  const metricsPort = config.metrics.apiPort;
  // A process sharing the port tries to compose before it listens (bounded); a process alone listens first.
  const earlyComposed = shared ? await composeWithin(config, logger, SHARED_COMPOSE_BEFORE_LISTEN_MS) : undefined;
  const running = await listen(lifecycle.listener, config.host, config.port, logger, { reusePort: shared });
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

  composed ??= await composeWhenRedisAnswers(() => composeApi(config, logger, systemClock), {
    stopping: () => stopping,
    warn: (fields, msg) => logger.warn(fields, msg),
    retryMs: COMPOSE_RETRY_MS,
  });
  if (!composed) return;
  if (stopping) {
    await composed.close();
    return;
  }
  // Each process serves its own figures: on METRICS_PORT (`npm start` gives process N the port
  // METRICS_PORT + N - 1), else on the public /metrics; the scraper sums over processes.
  const registry = composed.deps.metrics.registry;
  if (metricsPort !== undefined)
    metricsListener = await serveMetrics(registry, config.metrics.host, metricsPort, logger);
  lifecycle.serve(createApp(composed.deps));
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
  const problem = reusePortProblem(config.apiProcesses);
  if (problem) {
    process.stderr.write(`proofline api: configuration error: ${problem}\n`);
    process.exit(CONFIG_ERROR_EXIT);
  }
  const logger = createLogger({ level: config.logLevel, name: 'api' });
  await runServer(config, logger);
}

main().catch((err: unknown) => {
  process.stderr.write(`proofline api: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
