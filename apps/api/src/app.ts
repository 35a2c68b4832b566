import express from 'express';
import type { Express } from 'express';
import { cors, notFoundHandler, problemHandler, requestContext } from '@proofline/shared-http';
import type { MetricsSource } from '@proofline/shared-http';
import { queueDashboard } from './admin/queue-dashboard';
import type { ApiDeps } from './deps';
import { arcCallbackRoutes } from './routes/arc-callback';
import { idempotent } from './idempotency';
import { openApiDocument } from './openapi/document';
import { claimsRoutes } from './routes/claims';
import { docsRoutes } from './routes/docs';
import { healthRoutes } from './routes/health';
import { identityKeyRoutes } from './routes/identity-keys';
import { legacyKeyRoutes } from './routes/legacy-keys';
import { linkedRecordsRoutes } from './routes/linked-records';
import { pageRoutes } from './routes/pages';
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
  if (deps.metrics) app.use(deps.metrics.middleware);
  // With METRICS_PORT the figures are served by the internal listener (server.ts) only.
  const publicMetrics =
    deps.metrics && deps.config.metrics.apiPort === undefined
      ? (options.metricsSource ?? deps.metrics.registry)
      : undefined;
  // Every router is built from its route table (openapi/route.ts), the table the OpenAPI document
  // is generated from. The records routers first: they carry the write load, and Express walks
  // every layer mounted before the one that matches. Their prefixes share no path with the routers
  // below, so the order changes nothing else: a request none of them answers still ends in
  // notFoundHandler.
  if (deps.records) {
    const { auth } = deps.records;
    const idem = deps.idempotency ? idempotent(deps.idempotency, (req) => auth.caller(req).tenant) : undefined;
    app.use(linkedRecordsRoutes(deps.records, auth, deps.config.maxRecordBytes, idem));
    app.use(recordsRoutes(deps.records, auth, deps.config.maxRecordBytes, idem));
  }
  app.use(healthRoutes(deps, publicMetrics));
  if (deps.identity) {
    app.use(identityKeyRoutes(deps.identity));
    app.use(legacyKeyRoutes(deps.identity, deps.config, deps.clock));
    if (deps.webhooks) app.use(webhookRoutes(deps.webhooks, deps.identity));
  }
  if (deps.identity && deps.queues && deps.config.adminUi)
    app.use(queueDashboard(deps.identity.authenticator, deps.queues));
  app.use(claimsRoutes(deps.claims));
  app.use(docsRoutes(openApiDocument()));
  app.use(pageRoutes(deps.config.graphqlPort));
  if (deps.arcCallback) app.use(arcCallbackRoutes(deps.arcCallback));
  app.use(notFoundHandler());
  app.use(problemHandler());
  return app;
}
