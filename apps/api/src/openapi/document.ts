/**
 * The OpenAPI 3.1 description of every REST endpoint, served at /api/v1/openapi.json and rendered
 * at /api/v1/docs. Generated from the route tables the Express routers are built from
 * (`route.ts`; each route file declares its operations next to its handlers), never written by
 * hand: schemas are zod (`schemas.ts`, records' answers from records-domain, request bodies the
 * very schemas the routes parse with) through `z.toJSONSchema`; every operation gets its
 * `security`, each problem response its `errorCode` enum and an example, keyed 2xx answers the
 * RateLimit headers, legacy answers Deprecation/Sunset/Link. Declarations are never mutated: every
 * header object is built afresh.
 *
 * Tests: `document.spec.ts` (OpenAPI 3.1 validator, Redocly `recommended` with 0 errors, every
 * example valid against its schema), `routes.spec.ts` (exactly the routes of the production
 * composition), `contract.spec.ts` (real responses validate against the documented ones).
 */
import { z } from 'zod';
import { APP_VERSION } from '@proofline/shared-config';
import { STATUS_TITLES } from '@proofline/shared-errors';
import { QUEUE_DASHBOARD_ROUTES } from '../admin/queue-dashboard';
import { ARC_CALLBACK_ROUTES } from '../routes/arc-callback';
import { CLAIMS_ROUTES } from '../routes/claims';
import { DOCS_ROUTES } from '../routes/docs';
import { HEALTH_ROUTES } from '../routes/health';
import { IDENTITY_KEY_ROUTES } from '../routes/identity-keys';
import { LEGACY_KEY_ROUTES } from '../routes/legacy-keys';
import { LINKED_RECORD_ROUTES } from '../routes/linked-records';
import { PAGE_ROUTES } from '../routes/pages';
import { RECORD_ROUTES } from '../routes/records';
import { WEBHOOK_ROUTES } from '../routes/webhooks';
import { EX_KEY, EX_TX, legacyHeaders, rateLimitHeaders } from './parts';
import type { Json, Param, ProblemSpec, ResponseDecl, RouteDecl, RouteTable, Schema, Security } from './route';
import { components } from './schemas';

/**
 * Every route table of the REST app, in document order (internal tables are declared here but
 * left out of the document). A table the app mounts but that is missing here fails
 * routes.spec.ts (a served route that is not declared).
 */
export const ROUTE_TABLES: readonly RouteTable[] = [
  LINKED_RECORD_ROUTES,
  RECORD_ROUTES,
  WEBHOOK_ROUTES,
  IDENTITY_KEY_ROUTES,
  LEGACY_KEY_ROUTES,
  CLAIMS_ROUTES,
  QUEUE_DASHBOARD_ROUTES,
  HEALTH_ROUTES,
  DOCS_ROUTES,
  PAGE_ROUTES,
  ARC_CALLBACK_ROUTES,
];

/**
 * JSON Schema of a declared schema: a zod schema through `z.toJSONSchema`, a registered component
 * (anywhere inside it) as a `$ref`; a literal JSON Schema copied.
 */
function jsonSchema(schema: Schema): Json {
  if (!(schema instanceof z.ZodType)) return structuredClone(schema);
  const generated = z.toJSONSchema(schema, { metadata: components, unrepresentable: 'any' }) as Json;
  const { $schema: _s, $defs: _d, ...rest } = generated;
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
}

const SECURITY: Record<Security, Json[]> = {
  key: [{ ApiKey: [] }],
  bearer: [{ Bearer: [] }, {}],
  'admin-ui': [{ ApiKey: [] }, { AdminBasic: [] }],
  none: [],
};

function problemResponse(status: number, spec: ProblemSpec, path: string): Json {
  const code = spec.codes[0] ?? 'ERROR';
  const headers = spec.headers?.();
  return {
    description: `${spec.why} (errorCode: ${spec.codes.join(', ')})`,
    ...(headers && Object.keys(headers).length > 0 ? { headers } : {}),
    content: {
      'application/problem+json': {
        schema: {
          allOf: [{ $ref: '#/components/schemas/Problem' }],
          properties: { status: { const: status }, errorCode: { enum: [...spec.codes] } },
        },
        example: {
          type: `https://proofline.dev/problems/${code}`,
          title: STATUS_TITLES[status] ?? 'Error',
          status,
          detail: spec.why,
          errorCode: code,
          instance: path.replace('{txId}', EX_TX).replace('{id}', EX_KEY.id).replace('{apiKeyId}', '101'),
        },
      },
    },
  };
}

function parameters(route: RouteDecl): Json[] {
  const request = route.request ?? {};
  const param = (p: Param, where: 'path' | 'query' | 'header'): Json => ({
    name: p.name,
    in: where,
    required: where === 'path' ? true : (p.required ?? false),
    ...(p.description !== undefined ? { description: p.description } : {}),
    schema: jsonSchema(p.schema),
    ...(p.example !== undefined ? { example: p.example } : {}),
  });
  return [
    ...(request.params ?? []).map((p) => param(p, 'path')),
    ...(request.query ?? []).map((p) => param(p, 'query')),
    ...(request.headers ?? []).map((p) => param(p, 'header')),
  ];
}

function content(media: ResponseDecl['content']): Json {
  const out: Json = {};
  for (const [type, m] of Object.entries(media ?? {})) out[type] = { schema: jsonSchema(m.schema), example: m.example };
  return out;
}

function operation(operationId: string, tag: string, path: string, route: RouteDecl): Json {
  const responses: Record<string, Json> = {};
  const keyed = route.security === 'key' || route.security === 'admin-ui';
  for (const [status, response] of Object.entries(route.responses)) {
    const rateLimited = keyed && status.startsWith('2') ? rateLimitHeaders() : {};
    const headers = { ...structuredClone(response.headers ?? {}), ...rateLimited };
    responses[status] = {
      description: response.description,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...(response.content ? { content: content(response.content) } : {}),
    };
  }
  for (const [status, p] of Object.entries(route.errors ?? {}).sort(([a], [b]) => Number(a) - Number(b))) {
    responses[status] = problemResponse(Number(status), p, path);
  }
  if (route.legacy) {
    for (const [status, response] of Object.entries(responses)) {
      responses[status] = {
        ...response,
        headers: { ...((response['headers'] as Json | undefined) ?? {}), ...legacyHeaders() },
      };
    }
  }
  const params = parameters(route);
  const body = route.request?.body;
  return {
    tags: [tag],
    operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.legacy ? { deprecated: true } : {}),
    security: SECURITY[route.security],
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(body
      ? {
          requestBody: {
            required: body.required,
            ...(body.description !== undefined ? { description: body.description } : {}),
            content: content(body.content),
          },
        }
      : {}),
    responses,
  };
}

/** The component schemas, generated from the zod registry. */
function componentSchemas(): Record<string, Json> {
  const generated = z.toJSONSchema(components, {
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: 'any',
  }) as { schemas: Record<string, Json> };
  const out: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(generated.schemas)) {
    const { $schema: _s, $id: _i, ...rest } = schema;
    out[id] = rest;
  }
  return out;
}

let cached: string | undefined;

/** The document (a fresh object on every call). */
export function openApiDocument(): Json {
  cached ??= JSON.stringify(buildDocument());
  return JSON.parse(cached) as Json;
}

function buildDocument(): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const table of ROUTE_TABLES.filter((t) => t.internal === undefined))
    for (const [operationId, route] of Object.entries(table.routes)) {
      const path = table.base + route.path;
      const item = (paths[path] ??= {});
      if (item[route.method]) throw new Error(`${route.method} ${path} is declared twice`);
      item[route.method] = operation(operationId, table.tag, path, route);
    }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Proofline API',
      version: APP_VERSION,
      summary: 'Publish records to a blockchain and prove them.',
      description:
        'Linked and independent records published as Bitcoin SV transactions with TSC Merkle proofs, identity API keys and verifier claims. ' +
        'Errors are RFC 7807 problem+json with an `errorCode`; every operation lists its codes. Any route also answers 404 `ROUTE_NOT_FOUND` for an unknown path, ' +
        '400 `BAD_REQUEST` / 431 `REQUEST_HEADER_FIELDS_TOO_LARGE` for requests the HTTP parser refuses (or without `Host`), 417 `EXPECTATION_FAILED` for an `Expect` other than `100-continue`, 405 `METHOD_NOT_ALLOWED` for `CONNECT`, and 500 `INTERNAL_ERROR` only for a real server fault.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proofline' },
    },
    servers: [{ url: '/', description: 'This server.' }],
    security: SECURITY.key,
    tags: [
      { name: 'Linked records', description: 'Chains of versions: create, update, delete, and reads.' },
      { name: 'Independent records', description: 'Stand-alone records.' },
      { name: 'Webhooks', description: 'Signed notifications of confirmed and failed records (Standard Webhooks).' },
      { name: 'Identity API keys', description: 'Keys with issuer/verifier permissions, a shared per-tenant limit.' },
      { name: 'Legacy keys (deprecated)', description: 'Deprecated endpoints, 410 Gone after LEGACY_SUNSET.' },
      { name: 'Verifier', description: 'Granted claims of a JWT bearer.' },
      { name: 'Operations', description: 'The queue dashboard.' },
      { name: 'Health', description: 'Liveness, readiness, metrics and these docs.' },
    ],
    paths,
    components: {
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'An identity API key: idty_ followed by 32 letters or digits.',
        },
        Bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A JWT signed with AUTH_JWT_SECRET (HS256) or by the AUTH_JWKS_URL key set.',
        },
        AdminBasic: {
          type: 'http',
          scheme: 'basic',
          description: 'The queue dashboard from a browser: an admin API key as the password, any user name.',
        },
      },
      schemas: componentSchemas(),
    },
  };
}
