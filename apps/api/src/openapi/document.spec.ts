import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { OpenApiValidator } from '../testing/openapi-validator';
import { openApiDocument } from './document';

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  summary?: string;
  security?: unknown[];
  deprecated?: boolean;
  parameters?: { name: string; in: string; schema: unknown; example?: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }> };
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: Json; example?: unknown }> }
  >;
}
const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'];
function operationsOf(doc: Json): { path: string; method: string; op: Operation }[] {
  const out: { path: string; method: string; op: Operation }[] = [];
  for (const [path, item] of Object.entries(doc['paths'] as Record<string, Record<string, Operation>>)) {
    for (const [method, op] of Object.entries(item)) if (METHODS.includes(method)) out.push({ path, method, op });
  }
  return out;
}

/** Redocly's `lint` with the `recommended` ruleset (ESM: run in a child node, like the validator). */
function redoclyLint(doc: unknown): { ruleId: string; severity: string; message: string; pointer?: string }[] {
  const script = `
    import { lintFromString, createConfig } from '@redocly/openapi-core';
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: input, absoluteRef: '/openapi.json', config });
    process.stdout.write(JSON.stringify(problems.map((p) => ({ ruleId: p.ruleId, severity: p.severity, message: p.message, pointer: p.location?.[0]?.pointer }))));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    input: JSON.stringify(doc),
    encoding: 'utf8',
  });
  return JSON.parse(out) as { ruleId: string; severity: string; message: string; pointer?: string }[];
}

const ROOT = path.resolve(__dirname, '../../../..');

/**
 * Validates with @seriousme/openapi-schema-validator (the official OpenAPI 3.1 JSON schema).
 * It is an ES module, which jest's CommonJS runtime cannot load, so it runs in a child node.
 */
function validate(doc: unknown): { valid: boolean; errors?: unknown } {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const result = await new Validator().validate(JSON.parse(input));
    process.stdout.write(JSON.stringify(result));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    input: JSON.stringify(doc),
    encoding: 'utf8',
  });
  return JSON.parse(out) as { valid: boolean; errors?: unknown };
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', () => {
    const result = validate(openApiDocument());
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('the validator is not a rubber stamp', () => {
    const broken = openApiDocument();
    (broken['paths'] as Record<string, unknown>)['/broken'] = { get: { responses: 'not-an-object' } };
    expect(validate(broken).valid).toBe(false);
  });

  it('every operation has an operationId, a summary or description, and documented responses', () => {
    const paths = openApiDocument()['paths'] as Record<
      string,
      Record<string, { operationId?: string; responses?: object }>
    >;
    const ids = new Set<string>();
    for (const [p, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        expect(`${method} ${p} ${op.operationId ?? 'missing'}`).not.toMatch(/missing$/);
        expect(ids.has(op.operationId as string)).toBe(false);
        ids.add(op.operationId as string);
        expect(Object.keys(op.responses ?? {}).length).toBeGreaterThan(0);
      }
    }
  });

  it('Redocly lint with the recommended rules: 0 errors (and the linter is not a rubber stamp)', () => {
    const problems = redoclyLint(openApiDocument());
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
    // Only "no 4xx" warnings remain, on the health and docs operations that have no client error.
    expect([...new Set(problems.map((p) => p.ruleId))]).toEqual(['operation-4xx-response']);
    const broken = openApiDocument();
    const op = (broken['paths'] as Record<string, Record<string, Json>>)['/api/v1/records']?.['post'] as Json;
    delete op['security'];
    delete op['summary'];
    (broken as Json)['security'] = undefined;
    expect(
      redoclyLint(JSON.parse(JSON.stringify(broken)))
        .filter((p) => p.severity === 'error')
        .map((p) => p.ruleId)
        .sort(),
    ).toEqual(['operation-summary', 'security-defined']);
  }, 60_000);

  it('every operation has a summary and its own security; keyed operations document 401, 429 and 503', () => {
    for (const { path, method, op } of operationsOf(openApiDocument())) {
      const where = `${method} ${path}`;
      expect(`${where}: ${op.summary ?? 'missing'}`).not.toMatch(/: missing$/);
      expect(Array.isArray(op.security)).toBe(true);
      const keyed = JSON.stringify(op.security).includes('ApiKey');
      if (keyed)
        expect(`${where} ${['401', '429', '503'].filter((s) => !op.responses[s]).join(',')}`).toBe(`${where} `);
      if (keyed)
        expect(Object.keys(op.responses['429']?.headers ?? {})).toEqual(
          expect.arrayContaining(['RateLimit', 'RateLimit-Policy', 'Retry-After']),
        );
    }
  });

  it('every problem response lists its errorCodes as an enum; every request and response body has an example that its schema accepts', () => {
    const doc = openApiDocument();
    const v = new OpenApiValidator(doc);
    let checked = 0;
    for (const { path, method, op } of operationsOf(doc)) {
      const where = `${method} ${path}`;
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          expect(`${where} ${status} ${type} example: ${media.example === undefined ? 'missing' : 'ok'}`).toMatch(
            /ok$/,
          );
          expect(`${where} ${status} ${v.errors(media.schema, media.example).join('; ')}`).toBe(`${where} ${status} `);
          checked++;
          if (type === 'application/problem+json') {
            const codes = ((media.schema['properties'] as Json)['errorCode'] as { enum: string[] }).enum;
            expect(codes.length).toBeGreaterThan(0);
            expect(
              v.errors(media.schema, { ...(media.example as Json), errorCode: 'SOMETHING_ELSE' }).length,
            ).toBeGreaterThan(0);
          }
        }
      }
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        expect(`${where} request ${type} ${v.errors(media.schema, media.example).join('; ')}`).toBe(
          `${where} request ${type} `,
        );
        checked++;
      }
      for (const p of op.parameters ?? []) {
        expect(
          `${where} ${p.name} ${p.example === undefined ? 'no example' : v.errors(p.schema, p.example).join('; ')}`,
        ).toBe(`${where} ${p.name} `);
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('Deprecation, Sunset and Link are documented on every legacy response and on no other', () => {
    let legacyResponses = 0;
    for (const { path, method, op } of operationsOf(openApiDocument())) {
      for (const [status, response] of Object.entries(op.responses)) {
        const names = Object.keys(response.headers ?? {});
        const legacyNames = names.filter((n) => ['Deprecation', 'Sunset', 'Link'].includes(n));
        if (op.deprecated) {
          expect(`${method} ${path} ${status} ${legacyNames.sort().join(',')}`).toBe(
            `${method} ${path} ${status} Deprecation,Link,Sunset`,
          );
          legacyResponses++;
        } else {
          expect(`${method} ${path} ${status} ${legacyNames.join(',')}`).toBe(`${method} ${path} ${status} `);
        }
      }
    }
    expect(legacyResponses).toBeGreaterThan(20);
  });

  it('request bodies are generated from the zod schemas the routes parse with', () => {
    const schemas = (openApiDocument()['components'] as Json)['schemas'] as Record<string, Json>;
    const v = new OpenApiValidator(openApiDocument());
    expect(v.errors(schemas['CreateKeyRequest'], { name: 'ok name', issuerPermission: 'Issuer_User' })).toEqual([]);
    expect(
      v.errors(schemas['CreateKeyRequest'], { name: 'ok name', issuerPermissions: 'Issuer_User' }).length,
    ).toBeGreaterThan(0);
    expect(v.errors(schemas['CreateKeyRequest'], { name: 'ab' }).length).toBeGreaterThan(0);
    expect(v.errors(schemas['RevokeRequest'], { isRevoked: 'yes' }).length).toBeGreaterThan(0);
    expect(v.errors(schemas['LegacyPatchRequest'], { status: 'Paused' }).length).toBeGreaterThan(0);
  });
});
