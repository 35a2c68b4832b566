import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { openApiDocument } from './document';

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
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, input: JSON.stringify(doc), encoding: 'utf8' });
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
    const paths = openApiDocument()['paths'] as Record<string, Record<string, { operationId?: string; responses?: object }>>;
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
});
