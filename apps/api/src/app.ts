import express from 'express';
import type { Express } from 'express';
import { unavailable } from '@proofline/shared-errors';
import { notFoundHandler, problemHandler, requestContext } from '@proofline/shared-http';
import type { ApiDeps } from './deps';
import { claimsRoutes } from './routes/claims';
import { docsRoutes } from './routes/docs';
import { healthRoutes } from './routes/health';
import { identityKeyRoutes } from './routes/identity-keys';
import { legacyKeyRoutes } from './routes/legacy-keys';
import { linkedRecordsRoutes } from './routes/linked-records';
import { recordsRoutes } from './routes/records';

/** Builds the Express app. Routes parse input, call one use case and map the result. */
export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext(deps.logger));
  if (deps.metrics) {
    const { registry, middleware } = deps.metrics;
    app.use(middleware);
    app.get('/metrics', async (_req, res) => {
      try {
        const text = await registry.metrics();
        res.type(registry.contentType).send(text);
      } catch (err) {
        throw unavailable('METRICS_UNAVAILABLE', 'Metrics could not be collected (is Redis reachable?).', 5, err);
      }
    });
  }
  app.use(healthRoutes(deps));
  if (deps.identity) {
    app.use(identityKeyRoutes(deps.identity));
    app.use(legacyKeyRoutes(deps.identity, deps.config, deps.clock));
  }
  app.use(claimsRoutes(deps.claims));
  app.use(docsRoutes());
  if (deps.records) {
    app.use('/api/v1/linkedrecords', linkedRecordsRoutes(deps.records.service, deps.records.auth, deps.config.maxRecordBytes));
    app.use('/api/v1/records', recordsRoutes(deps.records.service, deps.records.auth, deps.config.maxRecordBytes));
  }
  app.use(notFoundHandler());
  app.use(problemHandler());
  return app;
}
