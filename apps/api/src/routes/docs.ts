import express from 'express';
import type { Router } from 'express';
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';
import { STARTING, json, text } from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';
import type { Json } from '../openapi/route';

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Proofline API</title><link rel="stylesheet" href="./docs/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="./docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: './openapi.json', dom_id: '#ui', deepLinking: true });</script>
</body></html>`;

/** `/api/v1/openapi.json` and interactive docs at `/api/v1/docs` (Swagger UI served locally). */
export const DOCS_ROUTES = routeTable({
  base: '/api/v1',
  tag: 'Health',
  routes: {
    apiDocs: {
      method: 'get',
      path: '/docs',
      security: 'none',
      summary: 'Interactive API documentation (Swagger UI).',
      responses: { '200': text('HTML page.', 'text/html', '<!doctype html><html>…</html>') },
      errors: STARTING,
    },
    openApiDocument: {
      method: 'get',
      path: '/openapi.json',
      security: 'none',
      summary: 'This document.',
      responses: { '200': json('This document.', { type: 'object' }, { openapi: '3.1.0' }) },
      errors: STARTING,
    },
  },
});

/** `document`: the OpenAPI document to serve (`openApiDocument()`, generated from the route tables). */
export function docsRoutes(document: Json): Router {
  const served = JSON.stringify(document);
  const router = express.Router();
  const mounted = mountRoutes(
    DOCS_ROUTES,
    {
      apiDocs: [
        (_req, res) => {
          res.type('text/html').send(PAGE);
        },
      ],
      openApiDocument: [
        (_req, res) => {
          res.type('application/json').send(served);
        },
      ],
    },
    router,
  );
  // Swagger UI's own files, after the page itself.
  router.use('/docs', express.static(getAbsoluteFSPath(), { index: false, maxAge: '1h' }));
  return mounted;
}
