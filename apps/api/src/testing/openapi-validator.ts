// JSON Schema validation against the OpenAPI document, for the OpenAPI specs (not a spec itself):
// ajv's draft 2020-12 validator (OpenAPI 3.1's dialect) with ajv-formats. Both are installed as
// dependencies of the OpenAPI tools the project already uses (@seriousme/openapi-schema-validator,
// @redocly/openapi-core).
import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;
const DOC_ID = 'urn:proofline:openapi';

/** Compiles schemas of `doc` (which may `$ref` its components) into validators, cached by their JSON. */
export class OpenApiValidator {
  private readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(doc: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOC_ID, components: doc['components'] });
  }

  /** Validates `value` against `schema`; returns the errors as readable lines (empty = valid). */
  errors(schema: unknown, value: unknown): string[] {
    const key = JSON.stringify(schema);
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile(JSON.parse(key.replaceAll('"#/components/', `"${DOC_ID}#/components/`)) as Json);
      this.cache.set(key, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
    );
  }
}
