import type { Router } from 'express';
import express from 'express';
import { APP_VERSION } from '@proofline/shared-config';
import { notFound } from '@proofline/shared-errors';
import { PAGE_HEADERS, readBuiltPage } from '@proofline/shared-http';
import { STARTING, json, text } from '../openapi/parts';
import { mountRoutes, routeTable } from '../openapi/route';

/** What `GET /` answers: where to go from here (the explorer is on the GraphQL app's port). */
export function rootLinks(graphqlPort: number): Record<string, string> {
  return {
    docs: '/api/v1/docs',
    openapi: '/api/v1/openapi.json',
    verify: '/verify',
    explorer: `/explorer on the GraphQL app (port ${graphqlPort})`,
  };
}

/** `/` (the way in) and `/verify`, the receipt verifier page built by `npm run build`. */
export const PAGE_ROUTES = routeTable({
  base: '',
  tag: 'Health',
  routes: {
    root: {
      method: 'get',
      path: '/',
      security: 'none',
      summary: 'Where to start: the API documentation, the receipt verifier, the GraphQL explorer.',
      responses: {
        '200': json(
          'Links.',
          {
            type: 'object',
            required: ['name', 'version', 'links'],
            properties: {
              name: { type: 'string' },
              version: { type: 'string' },
              links: { type: 'object', additionalProperties: { type: 'string' } },
            },
          },
          { name: 'proofline', version: APP_VERSION, links: rootLinks(4000) },
        ),
      },
      errors: STARTING,
    },
    verifyPage: {
      method: 'get',
      path: '/verify',
      security: 'none',
      summary: 'The receipt verifier: a self-contained page that checks a receipt in the browser, offline.',
      description:
        'One HTML file with its script inline: it loads nothing else and sends nothing unless the user asks for the online header check. It can be saved and opened from disk.',
      responses: { '200': text('HTML page.', 'text/html', '<!doctype html><html>…</html>') },
      errors: {
        ...STARTING,
        404: { codes: ['PAGE_NOT_BUILT'], why: 'The pages were not built (`npm run build` builds them).' },
      },
    },
  },
});

/** `graphqlPort`: GRAPHQL_PORT, named in the root's link to the explorer. */
export function pageRoutes(graphqlPort: number): Router {
  const body = JSON.stringify({ name: 'proofline', version: APP_VERSION, links: rootLinks(graphqlPort) });
  return mountRoutes(
    PAGE_ROUTES,
    {
      root: [
        (_req, res) => {
          res.type('application/json').send(body);
        },
      ],
      verifyPage: [
        (_req, res) => {
          const html = readBuiltPage('verify');
          if (html === undefined)
            throw notFound('PAGE_NOT_BUILT', 'The verifier page is not built: run `npm run build`.');
          res.set(PAGE_HEADERS).send(html);
        },
      ],
    },
    express.Router(),
  );
}
