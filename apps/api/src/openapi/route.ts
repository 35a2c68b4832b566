/**
 * Route declarations: each REST operation is written once, as data, in a {@link RouteTable} next
 * to its handlers. The Express router is built from the table ({@link mountRoutes}: method and
 * path come from the declaration) and the OpenAPI document is generated from the same tables
 * (`document.ts`), so the document cannot describe a route the app does not serve, or miss one
 * it does. How to add a route: apps/api/README.md.
 */
import { Router } from 'express';
import type { RequestHandler } from 'express';
import type { z } from 'zod';

export type Json = Record<string, unknown>;
export type Method = 'get' | 'head' | 'post' | 'put' | 'patch' | 'delete';

/** A zod schema (a registered component becomes a `$ref`) or a literal JSON Schema. */
export type Schema = z.ZodType | Json;

/**
 * Who may call: `key` an x-api-key, `bearer` an optional JWT, `admin-ui` an x-api-key or HTTP
 * Basic with the key as password, `none` anyone. Keyed operations document the RateLimit headers
 * on their 2xx answers.
 */
export type Security = 'key' | 'bearer' | 'admin-ui' | 'none';

/** One parameter; where it is sent (path, query, header) is the slot of {@link RequestDecl} it is in. */
export interface Param {
  readonly name: string;
  readonly description?: string;
  /** Path parameters are always required; query and header parameters are not unless set. */
  readonly required?: boolean;
  readonly schema: Schema;
  readonly example?: unknown;
}

/** A request or response body of one media type. */
export interface Media {
  readonly schema: Schema;
  readonly example: unknown;
}

export interface BodyDecl {
  readonly required: boolean;
  readonly description?: string;
  readonly content: Readonly<Record<string, Media>>;
}

export interface RequestDecl {
  readonly params?: readonly Param[];
  readonly query?: readonly Param[];
  readonly headers?: readonly Param[];
  readonly body?: BodyDecl;
}

/** A response that is not a problem (success, 304, a health 503 with its own body). */
export interface ResponseDecl {
  readonly description: string;
  readonly headers?: Json;
  readonly content?: Readonly<Record<string, Media>>;
}

/** A problem response: its errorCodes (an enum in the schema) and why it happens. */
export interface ProblemSpec {
  readonly codes: readonly string[];
  readonly why: string;
  readonly headers?: () => Json;
}
export type Problems = Readonly<Record<number, ProblemSpec>>;

export interface RouteDecl {
  readonly method: Method;
  /** Relative to the table's `base`, OpenAPI template syntax (`/{txId}/status`); `''` is the base itself. */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly security: Security;
  readonly request?: RequestDecl;
  /** Success (and other non-problem) responses, by status. */
  readonly responses: Readonly<Record<string, ResponseDecl>>;
  /** Problem responses by status, with every errorCode the route can answer. */
  readonly errors?: Problems;
  /** Deprecated legacy operation: every response documents Deprecation, Sunset and Link. */
  readonly legacy?: boolean;
  /**
   * `subtree`: the handlers are mounted with `router.use` and serve every path under `path` (an
   * embedded app, the queue dashboard); the document describes the GET of its entry page.
   */
  readonly mount?: 'subtree';
}

/** The routes of one router, keyed by operationId (so ids are unique within a table). */
export interface RouteTable<R extends Readonly<Record<string, RouteDecl>> = Readonly<Record<string, RouteDecl>>> {
  /** Path prefix of every route (`''` for none): the router is mounted at it. */
  readonly base: string;
  /** The document tag of every operation of the table. */
  readonly tag: string;
  /**
   * Why the table is left out of the public document (a route only an upstream calls). Declared
   * and mounted like any other; routes.spec.ts counts it as declared.
   */
  readonly internal?: string;
  readonly routes: R;
}

export function routeTable<const R extends Readonly<Record<string, RouteDecl>>>(table: RouteTable<R>): RouteTable<R> {
  return table;
}

/**
 * The handlers of a table, one entry per operationId. A HEAD operation has none: Express answers
 * it with the GET of the same path (documented separately because its answer differs). `null`:
 * not served by this composition (a feature switched off); the key must still be given.
 */
export type Handlers<T extends RouteTable> = {
  readonly [K in keyof T['routes'] as T['routes'][K]['method'] extends 'head' ? never : K]:
    readonly RequestHandler[] | null;
};

/** OpenAPI template → Express path: `/{txId}/status` → `/:txId/status`, `''` → `/`. */
export function expressPath(path: string): string {
  return path === '' ? '/' : path.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * Builds a router from a table: every route at its declared method and path, with its handlers
 * (authentication, body parsing, the handler). `router` may already hold middleware that must run
 * first for every path under the base (the legacy deprecation headers); anything added to it
 * afterwards runs after the routes. The returned router is mounted at the app's root.
 */
export function mountRoutes<T extends RouteTable>(table: T, handlers: Handlers<T>, router: Router = Router()): Router {
  const byId = handlers as Readonly<Record<string, readonly RequestHandler[] | null | undefined>>;
  for (const [operationId, route] of Object.entries(table.routes)) {
    if (route.method === 'head') {
      const get = Object.values(table.routes).some((r) => r.method === 'get' && r.path === route.path);
      if (!get) throw new Error(`HEAD ${table.base}${route.path} is answered by a GET of the same path: declare it`);
      continue;
    }
    const chain = byId[operationId];
    if (chain === undefined) throw new Error(`No handlers for ${operationId}`);
    if (chain === null) continue;
    if (route.mount === 'subtree') router.use(expressPath(route.path), ...chain);
    else router[route.method](expressPath(route.path), ...chain);
  }
  return table.base === '' ? router : Router().use(table.base, router);
}
