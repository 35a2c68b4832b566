import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Registry } from 'prom-client';
import { CONFIG_ERROR_EXIT } from '@proofline/shared-config';
import type { Config } from '@proofline/shared-config';
import { serveMetrics } from '@proofline/shared-http';
import type { MetricsListener, MetricsSource } from '@proofline/shared-http';
import type { Logger } from '@proofline/shared-logger';

/**
 * `API_PROCESSES` > 1: the REST app as a node:cluster. The primary creates the listening socket
 * and shares it with the server processes, which accept from it themselves (`SCHED_NONE`); it
 * stays open while any process lives, so SIGKILL of one server process refuses no connection: the
 * kernel resets only the connections that process had accepted (its requests in flight), and the
 * primary forks its replacement at once. The primary runs no application code: it forks,
 * replaces, aggregates `/metrics` and forwards SIGTERM.
 *
 * Why not Node's default round-robin (the primary accepts and passes each connection on): a
 * connection the primary has handed to a process that dies before acknowledging it stays open in
 * the primary and hangs until the client gives up (the probe saw a 10 s client timeout at a
 * SIGKILL); with `SCHED_NONE` it is reset at once. It also saves the primary's hop per
 * connection. The price is a less even spread of connections between the processes.
 */

const METRICS_REQUEST = 'proofline:cluster-metrics';
const METRICS_REPLY = 'proofline:cluster-metrics-reply';

interface MetricsRequest {
  readonly type: typeof METRICS_REQUEST;
  readonly id: number;
}
interface MetricsReply {
  readonly type: typeof METRICS_REPLY;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/** Back-off before forking again after `recent` exits within the last minute (a crash loop must not spin). */
function replaceDelayMs(recent: number): number {
  return recent <= 1 ? 0 : Math.min(250 * 2 ** (recent - 2), 4000);
}

export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  const log = logger.child({ role: 'cluster-primary' });
  const aggregator = new AggregatorRegistry();
  const source: MetricsSource = { contentType: aggregator.contentType, metrics: () => aggregator.clusterMetrics() };
  let stopping = false;
  const exits: number[] = [];

  const fork = (): Worker => {
    const worker = cluster.fork();
    worker.on('message', (message: unknown) => {
      const m = message as Partial<MetricsRequest> | null;
      if (m?.type !== METRICS_REQUEST || typeof m.id !== 'number') return;
      const id = m.id;
      source.metrics().then(
        (text) => worker.isConnected() && worker.send({ type: METRICS_REPLY, id, text } satisfies MetricsReply),
        (err: unknown) =>
          worker.isConnected() &&
          worker.send({
            type: METRICS_REPLY,
            id,
            error: err instanceof Error ? err.message : String(err),
          } satisfies MetricsReply),
      );
    });
    return worker;
  };

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (code === CONFIG_ERROR_EXIT) {
      log.fatal({ pid: worker.process.pid }, 'a server process rejected the configuration; stopping');
      process.exit(CONFIG_ERROR_EXIT);
    }
    const now = Date.now();
    exits.push(now);
    while (exits.length > 0 && now - (exits[0] ?? now) > 60_000) exits.shift();
    const delay = replaceDelayMs(exits.length);
    log.warn({ pid: worker.process.pid, code, signal, replaceInMs: delay }, 'server process exited; replacing it');
    if (delay === 0) fork();
    else setTimeout(() => !stopping && fork(), delay).unref();
  });

  cluster.schedulingPolicy = cluster.SCHED_NONE;
  for (let i = 0; i < config.apiProcesses; i++) fork();
  let metrics: MetricsListener | undefined;
  if (config.metrics.apiPort !== undefined)
    metrics = await serveMetrics(source, config.metrics.host, config.metrics.apiPort, log);
  log.info({ processes: config.apiProcesses, port: config.port, metricsPort: metrics?.port }, 'cluster started');

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping: server processes drain first');
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            const kill = setTimeout(() => w.process.kill('SIGKILL'), config.shutdownGraceMs + 2000);
            w.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            w.process.kill('SIGTERM');
          }),
      ),
    );
    await metrics?.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

/**
 * In a server process of the cluster: answers the primary's aggregation requests with `registry`
 * (prom-client's protocol) and returns the source a public `/metrics` route serves: the
 * figures of every server process, summed by the primary (gauges read from Redis are the same in
 * every process and are aggregated with `max`, see metrics.ts). Outside a cluster: `registry`.
 */
export function clusterMetricsSource(registry: Registry): MetricsSource {
  if (!cluster.isWorker) return registry;
  // Constructing one registers prom-client's responder in this process (its only side effect here).
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  let next = 0;
  const pending = new Map<number, { resolve(text: string): void; reject(err: Error): void }>();
  process.on('message', (message: unknown) => {
    const m = message as Partial<MetricsReply> | null;
    if (m?.type !== METRICS_REPLY || typeof m.id !== 'number') return;
    const waiter = pending.get(m.id);
    if (!waiter) return;
    pending.delete(m.id);
    if (typeof m.text === 'string') waiter.resolve(m.text);
    else waiter.reject(new Error(m.error ?? 'metrics aggregation failed'));
  });
  return {
    contentType: registry.contentType,
    metrics: () =>
      new Promise<string>((resolve, reject) => {
        const id = ++next;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error('the cluster primary did not aggregate metrics in time'));
        }, 5000);
        pending.set(id, {
          resolve: (t) => {
            clearTimeout(timer);
            resolve(t);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
        process.send?.({ type: METRICS_REQUEST, id } satisfies MetricsRequest);
      }),
  };
}
