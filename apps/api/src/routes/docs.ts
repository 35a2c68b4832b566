import express, { Router } from 'express';
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';
import { openApiDocument } from '../openapi/document';

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Proofline API</title><link rel="stylesheet" href="./docs/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="./docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: './openapi.json', dom_id: '#ui', deepLinking: true });</script>
</body></html>`;

/** `/api/v1/openapi.json` and interactive docs at `/api/v1/docs` (Swagger UI served locally). */
export function docsRoutes(): Router {
  const router = Router();
  const document = JSON.stringify(openApiDocument());
  router.get('/api/v1/openapi.json', (_req, res) => {
    res.type('application/json').send(document);
  });
  router.get('/api/v1/docs', (_req, res) => {
    res.type('text/html').send(PAGE);
  });
  router.use('/api/v1/docs', express.static(getAbsoluteFSPath(), { index: false, maxAge: '1h' }));
  return router;
}
