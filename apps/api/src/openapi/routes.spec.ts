import type { Express } from 'express';
import { systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix } from '@proofline/shared-redis';
import { uniquePrefix } from '@proofline/shared-testing';
import { createApp } from '../app';
import { composeApi } from '../compose';
import type { ComposedApi } from '../compose';
import { testConfig } from '../testing/harness';
import { ROUTE_TABLES, openApiDocument } from './document';

interface Layer {
  name: string;
  rawPath?: string;
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/** Every `METHOD /path` the Express app really routes, with `:param` written as `{param}`; a mounted sub-app counts as `GET` of its mount path. */
function appOperations(app: Express): Set<string> {
  const found = new Set<string>();
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== '_all')
            found.add(
              `${method.toUpperCase()} ${(prefix + layer.route.path).replace(/(.)\/$/, '$1').replace(/:(\w+)/g, '{$1}')}`,
            );
        }
      } else if (layer.name === 'router' && layer.handle.stack) {
        walk(layer.handle.stack, prefix + (layer.rawPath && layer.rawPath !== '/' ? layer.rawPath : ''));
      } else if (layer.name === 'app' && layer.rawPath) {
        // A mounted Express app (the bull-board dashboard): its entry page is the documented operation.
        found.add(`GET ${prefix}${layer.rawPath}`);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return found;
}

/** Every declared `METHOD /path` of the route tables, internal ones included. */
function declaredOperations(): Set<string> {
  const ops = new Set<string>();
  for (const table of ROUTE_TABLES)
    for (const route of Object.values(table.routes))
      ops.add(`${route.method.toUpperCase()} ${table.base}${route.path}`);
  return ops;
}

function documentedOperations(): Set<string> {
  const paths = openApiDocument()['paths'] as Record<string, Record<string, unknown>>;
  const ops = new Set<string>();
  for (const [p, item] of Object.entries(paths))
    for (const method of Object.keys(item)) ops.add(`${method.toUpperCase()} ${p}`);
  return ops;
}

describe('OpenAPI document vs the routes the production composition really has', () => {
  const prefix = uniquePrefix('oa');
  let composed: ComposedApi;
  let app: Express;
  beforeAll(async () => {
    // Every optional router on: the ARC callback too (an internal route table).
    const env = {
      ARC_CALLBACK_URL: 'http://127.0.0.1:9/arc/callback',
      ARC_CALLBACK_TOKEN: 'callback-token-0123456789abcdef',
    };
    composed = await composeApi(testConfig(prefix, env), createLogger({ level: 'silent', name: 't' }), systemClock);
    app = createApp(composed.deps);
  });
  afterAll(async () => {
    await deleteByPrefix(composed.deps.redis, prefix);
    await composed.close();
  });

  it('declares exactly the operations the app routes', () => {
    const routed = appOperations(app);
    expect(routed.size).toBeGreaterThan(20);
    const declared = declaredOperations();
    expect([...routed].filter((op) => !declared.has(op)).sort()).toEqual([]);
    // Express answers HEAD with the GET route (headers, no body), so a declared HEAD needs a GET.
    const routes = (op: string) =>
      routed.has(op) || (op.startsWith('HEAD ') && routed.has(op.replace(/^HEAD /, 'GET ')));
    expect([...declared].filter((op) => !routes(op)).sort()).toEqual([]);
  });

  it('documents every declared operation but those of internal tables', () => {
    const internal = new Set(
      ROUTE_TABLES.filter((t) => t.internal !== undefined).flatMap((t) =>
        Object.values(t.routes).map((r) => `${r.method.toUpperCase()} ${t.base}${r.path}`),
      ),
    );
    expect(internal).toEqual(new Set(['POST /arc/callback']));
    const documented = documentedOperations();
    expect(documented.size).toBeGreaterThan(30);
    expect(documented).toEqual(new Set([...declaredOperations()].filter((op) => !internal.has(op))));
  });
});
