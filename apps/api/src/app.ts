import express from 'express';
import type { Express } from 'express';
import { unavailable } from '@proofline/shared-errors';
import { cors, notFoundHandler, problemHandler, requestContext } from '@proofline/shared-http';
import type { MetricsSource } from '@proofline/shared-http';
import { queueDashboard } from './admin/queue-dashboard';
import type { ApiDeps } from './deps';
import { arcCallbackRoutes } from './routes/arc-callback';
import { idempotent } from './idempotency';
import { claimsRoutes } from './routes/claims';
import { docsRoutes } from './routes/docs';
import { healthRoutes } from './routes/health';
import { identityKeyRoutes } from './routes/identity-keys';
import { legacyKeyRoutes } from './routes/legacy-keys';
import { linkedRecordsRoutes } from './routes/linked-records';
import { recordsRoutes } from './routes/records';
import { webhookRoutes } from './routes/webhooks';

export interface AppOptions {
  /** What the public `/metrics` serves (default: this process's registry). */
  readonly metricsSource?: MetricsSource;
}

/** Builds the Express app. Routes parse input, call one use case and map the result. */
export function createApp(deps: ApiDeps, options: AppOptions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext(deps.logger));
  app.use(cors(deps.config.corsOrigins));
  if (deps.metrics) {
    const { middleware } = deps.metrics;
    const registry = options.metricsSource ?? deps.metrics.registry;
    app.use(middleware);
    // With METRICS_PORT the figures are served by the internal listener (server.ts) only.
    if (deps.config.metrics.apiPort === undefined)
      app.get('/metrics', async (_req, res) => {
        try {
          const text = await registry.metrics();
          res.type(registry.contentType).send(text);
        } catch (err) {
          throw unavailable('METRICS_UNAVAILABLE', 'Metrics could not be collected (is Redis reachable?).', 5, err);
        }
      });
  }
  // The records routers first: they carry the write load, and Express walks every layer mounted
  // before the one that matches (each unprefixed router below is entered by every request and
  // matches each of its routes in turn). Their prefixes share no path with the routers below, so
  // the order changes nothing else: a request none of them answers still ends in notFoundHandler.
  if (deps.records) {
    const { auth } = deps.records;
    const idem = deps.idempotency ? idempotent(deps.idempotency, (req) => auth.caller(req).tenant) : undefined;
    app.use('/api/v1/linkedrecords', linkedRecordsRoutes(deps.records, auth, deps.config.maxRecordBytes, idem));
    app.use('/api/v1/records', recordsRoutes(deps.records, auth, deps.config.maxRecordBytes, idem));
  }
  app.use(healthRoutes(deps));
  if (deps.identity) {
    app.use(identityKeyRoutes(deps.identity));
    app.use(legacyKeyRoutes(deps.identity, deps.config, deps.clock));
    if (deps.webhooks) app.use(webhookRoutes(deps.webhooks, deps.identity));
  }
  if (deps.identity && deps.queues && deps.config.adminUi)
    app.use(queueDashboard(deps.identity.authenticator, deps.queues));
  app.use(claimsRoutes(deps.claims));
  app.use(docsRoutes());
  if (deps.arcCallback) app.use(arcCallbackRoutes(deps.arcCallback));
  app.use(notFoundHandler());
  app.use(problemHandler());
  return app;
}
