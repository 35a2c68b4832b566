/**
 * The OpenAPI 3.1 description of every REST endpoint, served at /api/v1/openapi.json and rendered
 * at /api/v1/docs. Generated, not hand-written: schemas come from zod (`schemas.ts`, request
 * bodies being the very schemas the routes parse with) through `z.toJSONSchema`; every operation
 * is built by one function that requires a summary and `security`, gives each problem response
 * its `errorCode` enum and an example, and builds every header object afresh (no shared object is
 * ever mutated, so legacy headers cannot leak onto other operations).
 *
 * Tests: `document.spec.ts` (OpenAPI 3.1 validator, Redocly `recommended` with 0 errors, every
 * example valid against its schema), `routes.spec.ts` (exactly the routes of the production
 * composition), `contract.spec.ts` (real responses validate against the documented ones).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { APP_VERSION } from '@proofline/shared-config';
import { components } from './schemas';
import { EncodeParam, IdempotencyKeyHeader, LegacyIdParam, LinksParam, UpdateTokenParam } from './schemas';

type Json = Record<string, unknown>;
type Method = 'get' | 'head' | 'post' | 'put' | 'patch' | 'delete';

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
/** JSON Schema of a zod schema used inline (parameters), without the `$schema` keyword. */
const inline = (schema: z.ZodType): Json => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Json;
  return rest;
};

// ---- Examples (validated against their schemas by document.spec.ts) --------------------------

const EX_TX = createHash('sha256').update('example record').digest('hex');
const EX_TX2 = createHash('sha256').update('example record v2').digest('hex');
const EX_HEADER = '00000020' + 'ab'.repeat(32) + 'cd'.repeat(32) + '6a1e5f65' + 'ffff7f20' + '02000000';
const EX_BLOCK = '3e5c'.repeat(16);
const EX_SHA = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
const EX_ENCODING = [{ contentType: 'application/octet-stream; event-encoded=SHA256', output: EX_SHA }];
const EX_PROOF = {
  index: 1,
  txOrId: EX_TX,
  target: EX_HEADER,
  nodes: ['*', EX_TX2],
  targetType: 'header',
  proofType: 'branch',
  composite: false,
};
const EX_CONFIRMATION = {
  confirmedBlocks: 3,
  blockHash: EX_BLOCK,
  blockTimestamp: '2026-11-23T10:15:00.000Z',
  merkleProof: EX_PROOF,
};
const EX_KEY = {
  id: '0b6f3a52-4d1e-4f7a-9c2b-5e8d7a6c4b3f',
  name: 'ci-pipeline',
  keyMask: 'idty_****************************AbC9',
  permissions: ['Issuer_User'],
  expiresAt: '2027-01-22T10:00:00.000Z',
  revokedAt: null,
  createdBy: '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
  createdAt: '2026-11-23T10:00:00.000Z',
  updatedAt: '2026-11-23T10:00:00.000Z',
};
const EX_LEGACY = {
  id: 101,
  name: 'old integration',
  status: 'Active',
  createdAt: '2024-03-01T00:00:00.000Z',
  expiresAt: '2026-12-31T00:00:00.000Z',
  keyMask: '************7x9Q',
  permissions: ['Issuer_User'],
};
const EX_RAW_KEY = 'idty_Q3v9XkP2mB7nR4tY8wZ1cD6fG0hJ5sLa';

// ---- Headers (a fresh object on every call) ---------------------------------------------------

const retryAfter = (): Json => ({
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 1 },
    example: 1,
  },
});
const rateLimitHeaders = (): Json => ({
  'RateLimit-Policy': {
    description:
      'Sent when rate limits are configured (draft-ietf-httpapi-ratelimit-headers-10): one member per policy, `"per-key"` and/or `"per-tenant"`, with the burst as quota `q` over the window `w` (seconds) in which the rate refills it.',
    schema: { type: 'string' },
    example: '"per-key";q=200;w=2, "per-tenant";q=1000;w=2',
  },
  RateLimit: {
    description: 'The state of each policy: `r` requests left now, `t` seconds until the bucket is full.',
    schema: { type: 'string' },
    example: '"per-key";r=199;t=1, "per-tenant";r=998;t=1',
  },
});
const legacyHeaders = (): Json => ({
  Deprecation: { required: true, schema: { type: 'string', const: 'true' }, example: 'true' },
  Sunset: {
    required: true,
    description: 'HTTP date of the sunset instant (default Thu, 01 Oct 2026 00:00:00 GMT).',
    schema: { type: 'string' },
    example: 'Thu, 01 Oct 2026 00:00:00 GMT',
  },
  Link: {
    required: true,
    description: 'The successor operation, rel="successor-version".',
    schema: { type: 'string' },
    example: '</api/v1/auth/identity-api-keys>; rel="successor-version"',
  },
});
const replayedHeader = (): Json => ({
  'Idempotent-Replayed': {
    description: '`true` when this is the recorded answer of an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', const: 'true' },
    example: 'true',
  },
});
const challengeHeader = (): Json => ({
  'WWW-Authenticate': {
    required: true,
    schema: { type: 'string' },
    example: 'Basic realm="Proofline queues", charset="UTF-8"',
  },
});
const contentHeaders = (): Json => ({
  'Content-Type': {
    description: 'Content type of the final encoding step (unencoded: application/octet-stream).',
    schema: { type: 'string' },
    example: 'text/plain; event-encoded=Base64',
  },
  'Content-Length': { schema: { type: 'integer', minimum: 0 }, example: 16 },
  ETag: { description: 'The txId, quoted.', schema: { type: 'string' }, example: `"${EX_TX}"` },
});

// ---- Parameters -------------------------------------------------------------------------------

const txIdParam = (description: string): Json => ({
  name: 'txId',
  in: 'path',
  required: true,
  description,
  schema: ref('TxId'),
  example: EX_TX,
});
const encodeParam = (): Json => ({
  name: 'encode',
  in: 'query',
  required: false,
  description:
    'Encoders joined by `|`, each with an optional salt in round brackets, e.g. `SHA256(my-salt)|Base64`. Salt characters: A-Z a-z 0-9 / : - + (send `+` as %2B). Omit to publish unencoded (when the `unencoded` feature is on).',
  schema: inline(EncodeParam),
  example: 'SHA256',
});
const updateTokenParam = (): Json => ({
  name: 'updateToken',
  in: 'query',
  required: false,
  description:
    'Token returned when the record named by txId was written; optional for a writer of the tenant that created the chain.',
  schema: inline(UpdateTokenParam),
  example: 'utk_' + 'x'.repeat(43),
});
const idempotencyKeyParam = (): Json => ({
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the write safe to retry: 1–255 visible ASCII characters, unique per request (a UUID). The same key with the same request answers the first answer again for 24 hours and writes nothing more; with another request it is 422; while the first is still running, 409 with Retry-After (after a wait of up to 5 s).',
  schema: inline(IdempotencyKeyHeader),
  example: '5b0d8c2e-1f4a-4c3b-9e7d-2a6f8b1c0d9e',
});
const ifNoneMatchParam = (): Json => ({
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'The ETag (quoted txId) of bytes the client already holds: 304 without a body.',
  schema: { type: 'string' },
  example: `"${EX_TX}"`,
});
const keyIdParam = (): Json => ({
  name: 'id',
  in: 'path',
  required: true,
  description: 'The key id (UUID).',
  schema: { type: 'string', format: 'uuid' },
  example: EX_KEY.id,
});
const legacyIdParam = (): Json => ({
  name: 'apiKeyId',
  in: 'path',
  required: true,
  description: 'Legacy numeric id. A UUID answers 400: identity keys are managed through the identity endpoints.',
  schema: inline(LegacyIdParam),
  example: '101',
});

// ---- Request bodies ---------------------------------------------------------------------------

const rawBody = (description: string, example: string): Json => ({
  required: true,
  description,
  content: {
    'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' }, example },
  },
});
const jsonBody = (schema: string, example: unknown): Json => ({
  required: true,
  content: { 'application/json': { schema: ref(schema), example } },
});

// ---- Responses --------------------------------------------------------------------------------

/** A problem response: its errorCodes (an enum in the schema) and why it happens. */
interface ProblemSpec {
  readonly codes: readonly string[];
  readonly why: string;
  readonly headers?: () => Json;
}
type Problems = Readonly<Record<number, ProblemSpec>>;

/** Merges problem sets: codes of one status are united, reasons joined. */
function problems(...sets: Problems[]): Record<number, ProblemSpec> {
  const out: Record<number, ProblemSpec> = {};
  for (const set of sets) {
    for (const [status, spec] of Object.entries(set)) {
      const prev = out[Number(status)];
      out[Number(status)] = prev
        ? {
            codes: [...new Set([...prev.codes, ...spec.codes])],
            why: prev.why === spec.why ? prev.why : `${prev.why} ${spec.why}`,
            ...(prev.headers || spec.headers
              ? { headers: () => ({ ...(prev.headers?.() ?? {}), ...(spec.headers?.() ?? {}) }) }
              : {}),
          }
        : spec;
    }
  }
  return out;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
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
          allOf: [ref('Problem')],
          properties: { status: { const: status }, errorCode: { enum: [...spec.codes] } },
        },
        example: {
          type: `https://proofline.dev/problems/${code}`,
          title: TITLES[status] ?? 'Error',
          status,
          detail: spec.why,
          errorCode: code,
          instance: path.replace('{txId}', EX_TX).replace('{id}', EX_KEY.id).replace('{apiKeyId}', '101'),
        },
      },
    },
  };
}

const json = (description: string, schema: Json, example: unknown, headers?: Json): Json => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema, example } },
});
const text = (description: string, type: string, example: string, schema: Json = { type: 'string' }): Json => ({
  description,
  content: { [type]: { schema, example } },
});

// ---- Problem sets -----------------------------------------------------------------------------

/** Redis faults on the request path. */
/** Any route but /liveness and /readiness while the process starts and Redis is not reachable yet. */
const STARTING: Problems = {
  503: {
    codes: ['REDIS_UNAVAILABLE'],
    why: 'The process is starting and Redis is not reachable yet.',
    headers: retryAfter,
  },
};
const UNAVAILABLE: Problems = {
  503: {
    codes: ['REDIS_UNAVAILABLE', 'STORE_UNAVAILABLE'],
    why: 'Redis did not answer; retry after Retry-After seconds.',
    headers: retryAfter,
  },
};
const KEY_AUTH: Problems = {
  401: {
    codes: ['API_KEY_MISSING', 'API_KEY_INVALID', 'API_KEY_REVOKED', 'API_KEY_EXPIRED'],
    why: 'Missing, malformed, unknown, revoked or expired API key (x-api-key).',
  },
  429: {
    codes: ['RATE_LIMITED'],
    why: 'Over RATE_LIMIT_PER_KEY or RATE_LIMIT_PER_TENANT.',
    headers: () => ({ ...retryAfter(), ...rateLimitHeaders() }),
  },
  ...UNAVAILABLE,
};
const permission = (who: string): Problems => ({
  403: { codes: ['PERMISSION_DENIED'], why: `The key lacks the permission (${who}).` },
});
const WRITER = problems(KEY_AUTH, permission('Issuer_Admin or Issuer_User'));
const READER = KEY_AUTH;
const KEY_ADMIN = problems(KEY_AUTH, permission('Issuer_Admin or Verifier_Admin'));
const TX: Problems = {
  400: { codes: ['TX_ID_PARAM_INVALID'], why: 'txId is not 64 hex characters.' },
  404: { codes: ['TX_NOT_FOUND'], why: 'No record has this txId.' },
};
const FAMILY: Problems = {
  400: { codes: ['TX_INCORRECT_EVENT_TRANSACTION_TYPE'], why: 'The txId is a record of the other family.' },
};
const feature = (what: string): Problems => ({
  403: { codes: ['FEATURE_NOT_ENABLED'], why: `The ${what} feature is not enabled (FEATURES); it needs an upgrade.` },
});
const ENCODE: Problems = {
  400: {
    codes: ['ENCODE_PARAM_INVALID', 'UNKNOWN_ENCODER', 'ENCODER_SHA256_MISSING'],
    why: 'Bad encode parameter, an unknown or disabled encoder, or no encoder while unencoded records are disabled.',
  },
};
const RECORD_BODY: Problems = {
  400: { codes: ['CONTENT_IS_REQUIRED', 'BAD_REQUEST'], why: 'Empty or unreadable body.' },
  413: { codes: ['CONTENT_LENGTH_LIMIT_EXCEEDED'], why: 'Body larger than MAX_RECORD_BYTES.' },
  415: { codes: ['UNSUPPORTED_MEDIA_TYPE'], why: 'Body not sent as application/octet-stream.' },
};
const IDEMPOTENCY: Problems = {
  400: { codes: ['IDEMPOTENCY_KEY_INVALID'], why: 'Idempotency-Key is not 1–255 visible ASCII characters.' },
  409: {
    codes: ['IDEMPOTENCY_KEY_IN_PROGRESS'],
    why: 'A request with this Idempotency-Key is still running.',
    headers: retryAfter,
  },
  422: { codes: ['IDEMPOTENCY_KEY_REUSED'], why: 'This Idempotency-Key was used with another request.' },
};
const BACKLOG: Problems = {
  503: {
    codes: ['PUBLICATION_BACKLOG_FULL', 'FUNDING_EXHAUSTED'],
    why: 'More than MAX_PENDING_PUBLICATIONS records wait for publication, or the funding pool is empty; nothing was stored.',
    headers: retryAfter,
  },
};
const CHAIN_END: Problems = {
  409: { codes: ['NOT_LINKED_RECORDS_END'], why: 'The record is not the end of its chain (or the chain was deleted).' },
};
const TOKEN: Problems = {
  400: { codes: ['UPDATE_TOKEN_PARAM_INVALID'], why: 'Wrong updateToken.' },
  403: { codes: ['FORBIDDEN'], why: 'Another tenant without the updateToken.' },
};
const JSON_BODY: Problems = {
  400: {
    codes: ['VALIDATION_FAILED', 'BODY_INVALID_JSON'],
    why: 'The body is not what the endpoint takes (the detail names the field).',
  },
  413: { codes: ['CONTENT_LENGTH_LIMIT_EXCEEDED'], why: 'JSON body over 16 KiB.' },
  415: { codes: ['UNSUPPORTED_MEDIA_TYPE'], why: 'Body not sent as application/json.' },
};
const ESCALATION: Problems = {
  403: {
    codes: ['identity_api_key_privilege_escalation'],
    why: 'A permission above the calling key’s own on either side.',
  },
};
const KEY_ID: Problems = {
  400: { codes: ['API_KEY_ID_INVALID'], why: 'The id is not a UUID.' },
  404: { codes: ['API_KEY_NOT_FOUND'], why: 'No key with this id in the caller’s tenant.' },
};
const LEGACY: Problems = {
  410: { codes: ['LEGACY_ENDPOINT_REMOVED'], why: 'The legacy endpoints are removed after LEGACY_SUNSET.' },
};

const WEBHOOK_ADMIN = problems(KEY_AUTH, permission('Issuer_Admin'));
const WEBHOOK_ID: Problems = {
  400: { codes: ['WEBHOOK_ID_INVALID'], why: 'The id is not a UUID.' },
  404: { codes: ['WEBHOOK_NOT_FOUND'], why: 'No such webhook for this tenant.' },
};
const EX_WEBHOOK = {
  id: '3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c',
  url: 'https://hooks.example.com/proofline',
  events: ['record.confirmed', 'record.failed'],
  createdAt: '2026-11-23T10:00:00.000Z',
};
const webhookIdParam = (): Json => ({
  name: 'id',
  in: 'path',
  required: true,
  description: 'The webhook id (UUID).',
  schema: { type: 'string', format: 'uuid' },
  example: EX_WEBHOOK.id,
});

// ---- Operations -------------------------------------------------------------------------------

type Security = 'key' | 'bearer' | 'admin-ui' | 'none';
const SECURITY: Record<Security, Json[]> = {
  key: [{ ApiKey: [] }],
  bearer: [{ Bearer: [] }, {}],
  'admin-ui': [{ ApiKey: [] }, { AdminBasic: [] }],
  none: [],
};

interface OperationSpec {
  readonly path: string;
  readonly method: Method;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  readonly security: Security;
  readonly parameters?: readonly Json[];
  readonly requestBody?: Json;
  /** Success (and other non-problem) responses. */
  readonly ok: Readonly<Record<string, Json>>;
  readonly problems?: Problems;
  /** Deprecated legacy operation: every response carries Deprecation/Sunset/Link. */
  readonly legacy?: boolean;
}

function operation(spec: OperationSpec): Json {
  const responses: Record<string, Json> = {};
  const keyed = spec.security === 'key' || spec.security === 'admin-ui';
  for (const [status, response] of Object.entries(spec.ok)) {
    const rateLimited = keyed && status.startsWith('2') ? rateLimitHeaders() : {};
    const headers = { ...((response['headers'] as Json | undefined) ?? {}), ...rateLimited };
    responses[status] = { ...response, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
  }
  for (const [status, p] of Object.entries(spec.problems ?? {}).sort(([a], [b]) => Number(a) - Number(b))) {
    responses[status] = problemResponse(Number(status), p, spec.path);
  }
  if (spec.legacy) {
    for (const [status, response] of Object.entries(responses)) {
      responses[status] = {
        ...response,
        headers: { ...((response['headers'] as Json | undefined) ?? {}), ...legacyHeaders() },
      };
    }
  }
  return {
    tags: [spec.tag],
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    ...(spec.legacy ? { deprecated: true } : {}),
    security: SECURITY[spec.security],
    ...(spec.parameters && spec.parameters.length > 0 ? { parameters: spec.parameters } : {}),
    ...(spec.requestBody ? { requestBody: spec.requestBody } : {}),
    responses,
  };
}

const WEBHOOKS = '/api/v1/webhooks';
const LINKED = '/api/v1/linkedrecords';
const RECORDS = '/api/v1/records';
const KEYS = '/api/v1/auth/identity-api-keys';
const LEGACY_KEYS = '/api/v1/psp/product-manager/customer-user-api-keys';

/** `GET …/{txId}/receipt` of a record family. */
function receiptOperation(base: string, operationId: string, tag: string, linked: boolean): OperationSpec {
  return {
    path: `${base}/{txId}/receipt`,
    method: 'get',
    operationId,
    tag,
    security: 'key',
    summary: 'A receipt that proves the record offline (raw tx, TSC proof, header, Atomic BEEF).',
    description:
      'Check it with no service: `npm run cli -- receipt verify FILE [--content PATH]`. It does not prove that the header is on the longest chain: compare blockHash with a block explorer or headers service.',
    parameters: [txIdParam('A confirmed record.')],
    ok: {
      '200': json('The receipt.', ref('Receipt'), {
        version: 1,
        txId: EX_TX,
        family: linked ? 'linkedrecords' : 'records',
        ...(linked ? { prevTxId: null } : {}),
        rawTx: '0100000001' + '00'.repeat(40),
        encoding: ['SHA256'],
        contentType: 'application/octet-stream; event-encoded=SHA256',
        merkleProof: EX_PROOF,
        blockHeader: EX_HEADER,
        blockHash: EX_BLOCK,
        blockHeight: 812,
        beef: '0100beef' + '00'.repeat(20),
      }),
    },
    problems: problems(READER, TX, FAMILY, ...(linked ? [feature('linked')] : []), {
      409: {
        codes: ['RECEIPT_NOT_READY'],
        why: 'Not confirmed yet (Retry-After), or rejected by the chain for good (no Retry-After).',
        headers: retryAfter,
      },
    }),
  };
}

const writeNote =
  'Accepted at once (the txId is known); publication and confirmation follow asynchronously. Send an Idempotency-Key to retry safely.';

/** Every operation of the REST app. */
export function operations(): OperationSpec[] {
  const linkedWrite = (description: string): Json =>
    json(
      description,
      ref('LinkedWriteResult'),
      { txId: EX_TX, updateToken: 'utk_' + 'Gx7'.repeat(14) + 'Q', encoding: EX_ENCODING },
      replayedHeader(),
    );
  const contentOk = (): Json => ({
    description:
      'The record bytes, exactly as on chain, typed as the final encoding step (unencoded: application/octet-stream).',
    headers: contentHeaders(),
    content: { '*/*': { schema: { type: 'string' }, example: 'djE=' } },
  });
  const headOk = (): Json => ({ description: 'Headers only.', headers: contentHeaders() });
  const notModified = (): Json => ({
    description: 'The client already holds these bytes (If-None-Match).',
    headers: { ETag: { schema: { type: 'string' }, example: `"${EX_TX}"` } },
  });
  const linkedStatus = { confirmation: EX_CONFIRMATION, updatable: false, publication: 'published' };
  return [
    // Linked records
    {
      path: LINKED,
      method: 'post',
      operationId: 'createLinkedRecord',
      tag: 'Linked records',
      security: 'key',
      summary: 'Create a linked record (the first version of a chain).',
      description: writeNote,
      parameters: [encodeParam(), idempotencyKeyParam()],
      requestBody: rawBody('The record bytes.', 'v1'),
      ok: { '200': linkedWrite('Accepted; publication follows asynchronously.') },
      problems: problems(WRITER, feature('linked'), ENCODE, RECORD_BODY, IDEMPOTENCY, BACKLOG),
    },
    {
      path: `${LINKED}/{txId}/update`,
      method: 'post',
      operationId: 'updateLinkedRecord',
      tag: 'Linked records',
      security: 'key',
      summary: 'Append a new version to a chain.',
      description: `${writeNote} Of any number of concurrent updates of one record exactly one wins.`,
      parameters: [txIdParam('The chain end to update.'), encodeParam(), updateTokenParam(), idempotencyKeyParam()],
      requestBody: rawBody('The new version.', 'v2'),
      ok: { '200': linkedWrite('Accepted.') },
      problems: problems(
        WRITER,
        TX,
        FAMILY,
        feature('linked'),
        ENCODE,
        TOKEN,
        RECORD_BODY,
        CHAIN_END,
        IDEMPOTENCY,
        BACKLOG,
      ),
    },
    {
      path: `${LINKED}/{txId}/delete`,
      method: 'post',
      operationId: 'deleteLinkedRecord',
      tag: 'Linked records',
      security: 'key',
      summary: 'Terminate a chain with an empty transaction.',
      description: writeNote,
      parameters: [txIdParam('The chain end to delete.'), updateTokenParam(), idempotencyKeyParam()],
      ok: { '200': json('Accepted.', ref('DeleteResult'), { txId: EX_TX }, replayedHeader()) },
      problems: problems(WRITER, TX, FAMILY, feature('linked'), TOKEN, CHAIN_END, IDEMPOTENCY, BACKLOG),
    },
    {
      path: `${LINKED}/{txId}/status`,
      method: 'get',
      operationId: 'linkedRecordStatus',
      tag: 'Linked records',
      security: 'key',
      summary: 'Confirmation, publication and updatability.',
      parameters: [txIdParam('A linked record.')],
      ok: { '200': json('Status.', ref('LinkedStatus'), linkedStatus) },
      problems: problems(READER, TX, FAMILY, feature('linked')),
    },
    {
      path: `${LINKED}/{txId}/content`,
      method: 'get',
      operationId: 'linkedRecordContent',
      tag: 'Linked records',
      security: 'key',
      summary: 'The bytes on chain (possibly not yet confirmed).',
      parameters: [txIdParam('A linked record.'), ifNoneMatchParam()],
      ok: { '200': contentOk(), '304': notModified() },
      problems: problems(READER, TX, FAMILY, feature('linked')),
    },
    {
      path: `${LINKED}/{txId}/content`,
      method: 'head',
      operationId: 'linkedRecordContentHead',
      tag: 'Linked records',
      security: 'key',
      summary: 'Length and type of the record.',
      parameters: [txIdParam('A linked record.'), ifNoneMatchParam()],
      ok: { '200': headOk(), '304': notModified() },
      problems: problems(READER, TX, FAMILY, feature('linked')),
    },
    {
      path: `${LINKED}/{txId}/match`,
      method: 'post',
      operationId: 'matchLinkedRecord',
      tag: 'Linked records',
      security: 'key',
      summary: 'Does this content (and link) match the record?',
      parameters: [
        txIdParam('The record to compare with.'),
        encodeParam(),
        {
          name: 'prevTxId',
          in: 'query',
          required: false,
          description: 'For an update or delete: the record it updates or deletes. Omit for a create.',
          schema: ref('TxId'),
          example: EX_TX2,
        },
      ],
      requestBody: rawBody('The content to compare.', 'v2'),
      ok: { '200': json('Match result.', ref('MatchResult'), { match: true, confirmation: EX_CONFIRMATION }) },
      problems: problems(READER, TX, FAMILY, feature('verify'), ENCODE, RECORD_BODY, {
        400: { codes: ['PREV_TX_ID_PARAM_MISSING'], why: 'prevTxId is needed to match an update or delete.' },
      }),
    },
    {
      path: `${LINKED}/{txId}/navigate`,
      method: 'get',
      operationId: 'navigateLinkedRecords',
      tag: 'Linked records',
      security: 'key',
      summary: 'Walk the chain from txId (excluded).',
      parameters: [
        txIdParam('The start.'),
        {
          name: 'links',
          in: 'query',
          required: true,
          description:
            'Non-zero integer: the sign is the direction (positive later, negative earlier), the magnitude the maximum count (at most MAX_LINKS).',
          schema: inline(LinksParam),
          example: 10,
        },
      ],
      ok: {
        '200': json('Links.', ref('NavigateResult'), { txIds: [EX_TX2], endOfLinks: true, maxLinksRequestable: 1000 }),
      },
      problems: problems(
        READER,
        TX,
        {
          400: {
            codes: ['LINKS_PARAM_INVALID', 'INVALID_NAVIGATION_TRANSACTION_TYPE'],
            why: 'links is not a non-zero integer within MAX_LINKS, or the txId is an independent record.',
          },
        },
        feature('navigate'),
      ),
    },
    receiptOperation(LINKED, 'linkedRecordReceipt', 'Linked records', true),
    // Independent records
    {
      path: RECORDS,
      method: 'post',
      operationId: 'writeRecord',
      tag: 'Independent records',
      security: 'key',
      summary: 'Write an independent record.',
      description: writeNote,
      parameters: [encodeParam(), idempotencyKeyParam()],
      requestBody: rawBody('The record bytes.', 'an invoice'),
      ok: {
        '200': json(
          'Accepted; publication follows asynchronously.',
          ref('RecordWriteResult'),
          { txId: EX_TX, encoding: EX_ENCODING },
          replayedHeader(),
        ),
      },
      problems: problems(WRITER, ENCODE, RECORD_BODY, IDEMPOTENCY, BACKLOG),
    },
    {
      path: `${RECORDS}/{txId}/status`,
      method: 'get',
      operationId: 'recordStatus',
      tag: 'Independent records',
      security: 'key',
      summary: 'Confirmation of an independent record.',
      parameters: [txIdParam('An independent record.')],
      ok: { '200': json('Status.', ref('RecordStatus'), { confirmation: null, publication: 'pending' }) },
      problems: problems(READER, TX, FAMILY),
    },
    {
      path: `${RECORDS}/{txId}/content`,
      method: 'get',
      operationId: 'recordContent',
      tag: 'Independent records',
      security: 'key',
      summary: 'The bytes on chain.',
      parameters: [txIdParam('An independent record.'), ifNoneMatchParam()],
      ok: { '200': contentOk(), '304': notModified() },
      problems: problems(READER, TX, FAMILY),
    },
    {
      path: `${RECORDS}/{txId}/content`,
      method: 'head',
      operationId: 'recordContentHead',
      tag: 'Independent records',
      security: 'key',
      summary: 'Length and type of the record.',
      parameters: [txIdParam('An independent record.'), ifNoneMatchParam()],
      ok: { '200': headOk(), '304': notModified() },
      problems: problems(READER, TX, FAMILY),
    },
    {
      path: `${RECORDS}/{txId}/match`,
      method: 'post',
      operationId: 'matchRecord',
      tag: 'Independent records',
      security: 'key',
      summary: 'Does this content match the record?',
      parameters: [txIdParam('The record to compare with.'), encodeParam()],
      requestBody: rawBody('The content to compare.', 'an invoice'),
      ok: { '200': json('Match result.', ref('MatchResult'), { match: false, confirmation: null }) },
      problems: problems(READER, TX, FAMILY, feature('verify'), ENCODE, RECORD_BODY),
    },
    receiptOperation(RECORDS, 'recordReceipt', 'Independent records', false),
    // Webhooks
    {
      path: WEBHOOKS,
      method: 'post',
      operationId: 'createWebhook',
      tag: 'Webhooks',
      security: 'key',
      summary: 'Register a webhook; its signing secret is shown only in this answer.',
      requestBody: jsonBody('CreateWebhookRequest', {
        url: 'https://hooks.example.com/proofline',
        events: ['record.confirmed', 'record.failed'],
      }),
      ok: {
        '201': json('Created.', ref('CreatedWebhook'), {
          ...EX_WEBHOOK,
          secret: 'whsec_' + Buffer.alloc(32, 7).toString('base64'),
        }),
      },
      problems: problems(
        WEBHOOK_ADMIN,
        JSON_BODY,
        {
          400: {
            codes: ['WEBHOOK_URL_INVALID', 'WEBHOOK_URL_NOT_ALLOWED'],
            why: 'Not an http(s) URL, or one resolving to a loopback, private, link-local or metadata address (unless WEBHOOK_ALLOW_PRIVATE=true).',
          },
        },
        { 409: { codes: ['WEBHOOK_LIMIT_EXCEEDED'], why: 'The tenant has WEBHOOK_LIMIT webhooks.' } },
      ),
    },
    {
      path: WEBHOOKS,
      method: 'get',
      operationId: 'listWebhooks',
      tag: 'Webhooks',
      security: 'key',
      summary: "The tenant's webhooks, oldest first.",
      ok: { '200': json('Webhooks.', { type: 'array', items: ref('Webhook') }, [EX_WEBHOOK]) },
      problems: WEBHOOK_ADMIN,
    },
    {
      path: `${WEBHOOKS}/{id}`,
      method: 'delete',
      operationId: 'deleteWebhook',
      tag: 'Webhooks',
      security: 'key',
      summary: 'Delete a webhook and its delivery log.',
      parameters: [webhookIdParam()],
      ok: { '204': { description: 'Deleted.' } },
      problems: problems(WEBHOOK_ADMIN, WEBHOOK_ID),
    },
    {
      path: `${WEBHOOKS}/{id}/deliveries`,
      method: 'get',
      operationId: 'webhookDeliveries',
      tag: 'Webhooks',
      security: 'key',
      summary: 'The latest delivery attempts, newest first.',
      parameters: [webhookIdParam()],
      ok: {
        '200': json('Attempts.', { type: 'array', items: ref('DeliveryAttempt') }, [
          {
            messageId: 'msg_' + EX_TX.slice(0, 24),
            event: 'record.confirmed',
            txId: EX_TX,
            attempt: 1,
            at: '2026-11-23T10:15:02.000Z',
            statusCode: 200,
            durationMs: 41,
            error: null,
            delivered: true,
          },
        ]),
      },
      problems: problems(WEBHOOK_ADMIN, WEBHOOK_ID),
    },
    // Identity API keys
    {
      path: KEYS,
      method: 'post',
      operationId: 'createIdentityApiKey',
      tag: 'Identity API keys',
      security: 'key',
      summary: 'Create a key; the raw key is returned only here.',
      requestBody: jsonBody('CreateKeyRequest', { name: 'ci-pipeline', issuerPermission: 'Issuer_User' }),
      ok: { '201': json('Created.', ref('IdentityApiKeyWithRawKey'), { ...EX_KEY, rawKey: EX_RAW_KEY }) },
      problems: problems(
        KEY_ADMIN,
        JSON_BODY,
        ESCALATION,
        { 403: { codes: ['identity_api_key_limit_exceeded'], why: 'The tenant’s key limit (KEY_LIMIT) is reached.' } },
        {
          503: {
            codes: ['KEY_SERVICE_UNAVAILABLE'],
            why: 'The key worker did not answer in time; nothing was created.',
            headers: retryAfter,
          },
        },
      ),
    },
    {
      path: KEYS,
      method: 'get',
      operationId: 'listIdentityApiKeys',
      tag: 'Identity API keys',
      security: 'key',
      summary: "The tenant's keys, newest first, legacy keys mapped in.",
      ok: { '200': json('Keys.', { type: 'array', items: ref('IdentityApiKey') }, [EX_KEY]) },
      problems: KEY_ADMIN,
    },
    {
      path: `${KEYS}/usage`,
      method: 'get',
      operationId: 'identityApiKeyUsage',
      tag: 'Identity API keys',
      security: 'key',
      summary: 'Keys used and the shared limit.',
      ok: { '200': json('Usage.', ref('Usage'), { used: 2, limit: 5 }) },
      problems: KEY_ADMIN,
    },
    {
      path: `${KEYS}/{id}`,
      method: 'delete',
      operationId: 'deleteIdentityApiKey',
      tag: 'Identity API keys',
      security: 'key',
      summary: 'Delete a key (frees its slot).',
      parameters: [keyIdParam()],
      ok: { '204': { description: 'Deleted.' } },
      problems: problems(KEY_ADMIN, KEY_ID, ESCALATION),
    },
    {
      path: `${KEYS}/{id}/revoke`,
      method: 'post',
      operationId: 'revokeIdentityApiKey',
      tag: 'Identity API keys',
      security: 'key',
      summary: 'Revoke (isRevoked true) or re-activate (false); idempotent.',
      parameters: [keyIdParam()],
      requestBody: jsonBody('RevokeRequest', { isRevoked: true }),
      ok: {
        '201': json('The updated key.', ref('IdentityApiKey'), {
          ...EX_KEY,
          revokedAt: '2026-11-23T11:00:00.000Z',
          updatedAt: '2026-11-23T11:00:00.000Z',
        }),
      },
      problems: problems(KEY_ADMIN, KEY_ID, JSON_BODY, ESCALATION),
    },
    // Legacy keys
    {
      path: LEGACY_KEYS,
      method: 'post',
      operationId: 'legacyCreateKey',
      tag: 'Legacy keys (deprecated)',
      security: 'key',
      legacy: true,
      summary: 'Deprecated: use POST /api/v1/auth/identity-api-keys.',
      requestBody: jsonBody('LegacyCreateRequest', { name: 'old integration' }),
      ok: {
        '201': json('An identity key (UUID id) in the legacy shape, with rawKey.', ref('LegacyKeyWithRawKey'), {
          ...EX_LEGACY,
          id: EX_KEY.id,
          keyMask: EX_KEY.keyMask,
          rawKey: EX_RAW_KEY,
        }),
      },
      problems: problems(
        KEY_ADMIN,
        JSON_BODY,
        { 403: { codes: ['identity_api_key_limit_exceeded'], why: 'The tenant’s key limit is reached.' } },
        {
          503: {
            codes: ['KEY_SERVICE_UNAVAILABLE'],
            why: 'The key worker did not answer in time.',
            headers: retryAfter,
          },
        },
        LEGACY,
      ),
    },
    {
      path: LEGACY_KEYS,
      method: 'get',
      operationId: 'legacyListKeys',
      tag: 'Legacy keys (deprecated)',
      security: 'key',
      legacy: true,
      summary: 'Deprecated: use GET /api/v1/auth/identity-api-keys.',
      ok: { '200': json('Keys in the legacy shape.', { type: 'array', items: ref('LegacyKey') }, [EX_LEGACY]) },
      problems: problems(KEY_ADMIN, LEGACY),
    },
    {
      path: `${LEGACY_KEYS}/usage`,
      method: 'get',
      operationId: 'legacyUsage',
      tag: 'Legacy keys (deprecated)',
      security: 'key',
      legacy: true,
      summary: 'Deprecated: use GET /api/v1/auth/identity-api-keys/usage.',
      ok: { '200': json('Usage.', ref('Usage'), { used: 2, limit: 5 }) },
      problems: problems(KEY_ADMIN, LEGACY),
    },
    {
      path: `${LEGACY_KEYS}/{apiKeyId}`,
      method: 'delete',
      operationId: 'legacyDeleteKey',
      tag: 'Legacy keys (deprecated)',
      security: 'key',
      legacy: true,
      summary: 'Deprecated: use DELETE /api/v1/auth/identity-api-keys/{id}.',
      parameters: [legacyIdParam()],
      ok: { '204': { description: 'Deleted.' } },
      problems: problems(
        KEY_ADMIN,
        {
          400: {
            codes: ['API_KEY_ID_INVALID', 'API_KEY_MANAGED_BY_IDENTITY'],
            why: 'Not a legacy numeric id, or a UUID: manage identity keys through the identity endpoints.',
          },
          404: { codes: ['API_KEY_NOT_FOUND'], why: 'Unknown key.' },
        },
        LEGACY,
      ),
    },
    {
      path: `${LEGACY_KEYS}/{apiKeyId}`,
      method: 'patch',
      operationId: 'legacyUpdateKeyStatus',
      tag: 'Legacy keys (deprecated)',
      security: 'key',
      legacy: true,
      summary: 'Deprecated: use POST /api/v1/auth/identity-api-keys/{id}/revoke.',
      parameters: [legacyIdParam()],
      requestBody: jsonBody('LegacyPatchRequest', { status: 'Disabled' }),
      ok: {
        '200': json('The updated key in the legacy shape.', ref('LegacyKey'), { ...EX_LEGACY, status: 'Disabled' }),
      },
      problems: problems(
        KEY_ADMIN,
        JSON_BODY,
        {
          400: {
            codes: ['API_KEY_ID_INVALID', 'API_KEY_MANAGED_BY_IDENTITY'],
            why: 'Not a legacy numeric id, or a UUID.',
          },
          404: { codes: ['API_KEY_NOT_FOUND'], why: 'Unknown key.' },
        },
        LEGACY,
      ),
    },
    // Verifier
    ...(['/auth/granted-claims', '/api/v1/auth/granted-claims'] as const).map((path, i): OperationSpec => ({
      path,
      method: 'get',
      operationId: i === 0 ? 'grantedClaims' : 'grantedClaimsV1',
      tag: 'Verifier',
      security: 'bearer',
      summary: i === 0 ? 'Claims granted to the bearer of the token.' : 'Same as /auth/granted-claims.',
      description: 'Without credentials: 200 with no claims.',
      ok: {
        '200': json('Claims (empty without credentials).', ref('GrantedClaims'), {
          grantedClaims: ['Issuer', 'Verifier'],
        }),
      },
      problems: problems(
        { 401: { codes: ['INVALID_AUTHENTICATION_CREDENTIALS'], why: 'A bad, expired or wrongly signed token.' } },
        {
          503: {
            codes: ['REDIS_UNAVAILABLE'],
            why: 'The development signing secret (kept in Redis) could not be read.',
            headers: retryAfter,
          },
        },
      ),
    })),
    // Operations
    {
      path: '/admin/queues',
      method: 'get',
      operationId: 'queueDashboard',
      tag: 'Operations',
      security: 'admin-ui',
      summary: 'The BullMQ queue dashboard (read-only bull-board UI).',
      description:
        'An Issuer_Admin or Verifier_Admin key, as x-api-key or, from a browser, as HTTP Basic credentials with the key as the password (any user name). Its pages and JSON under /admin/queues/ are bull-board’s own. Off with ADMIN_UI=false (404).',
      ok: { '200': text('The dashboard page.', 'text/html', '<!DOCTYPE html><html>…</html>') },
      problems: problems(KEY_ADMIN, {
        401: { codes: ['API_KEY_MISSING'], why: 'A browser is asked for credentials.', headers: challengeHeader },
      }),
    },
    {
      path: '/liveness',
      method: 'get',
      operationId: 'liveness',
      tag: 'Health',
      security: 'none',
      summary: 'The process is up.',
      ok: { '200': text('Healthy', 'text/plain', 'Healthy', { type: 'string', const: 'Healthy' }) },
    },
    {
      path: '/readiness',
      method: 'get',
      operationId: 'readiness',
      tag: 'Health',
      security: 'none',
      summary: 'This process can serve (its Redis connection answers).',
      ok: {
        '200': json('Ready.', ref('Readiness'), {
          status: 'ready',
          appVersion: APP_VERSION,
          checks: { redis: 'up', workers: 2, draining: false },
        }),
        '503': json(
          'Not ready: Redis unreachable, the process still starting, or draining after SIGTERM.',
          ref('Readiness'),
          { status: 'not-ready', appVersion: APP_VERSION, checks: { redis: 'down', workers: null, draining: false } },
          retryAfter(),
        ),
      },
    },
    {
      path: '/metrics',
      method: 'get',
      operationId: 'metrics',
      tag: 'Health',
      security: 'none',
      summary: 'Prometheus metrics.',
      description:
        'Requests by route pattern and status, latency histogram, BullMQ job counts, records pending publication, chain tip height, process metrics. With METRICS_PORT set, served only on that internal port.',
      ok: {
        '200': text(
          'Prometheus text exposition format.',
          'text/plain',
          'http_requests_total{method="GET",route="/liveness",status="200"} 1\n',
        ),
      },
      problems: {
        503: {
          codes: ['METRICS_UNAVAILABLE', 'REDIS_UNAVAILABLE'],
          why: 'A source (Redis) did not answer.',
          headers: retryAfter,
        },
      },
    },
    {
      path: '/api/v1/docs',
      method: 'get',
      operationId: 'apiDocs',
      tag: 'Health',
      security: 'none',
      summary: 'Interactive API documentation (Swagger UI).',
      ok: { '200': text('HTML page.', 'text/html', '<!doctype html><html>…</html>') },
      problems: STARTING,
    },
    {
      path: '/api/v1/openapi.json',
      method: 'get',
      operationId: 'openApiDocument',
      tag: 'Health',
      security: 'none',
      summary: 'This document.',
      ok: { '200': json('This document.', { type: 'object' }, { openapi: '3.1.0' }) },
      problems: STARTING,
    },
  ];
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
  for (const op of operations()) (paths[op.path] ??= {})[op.method] = operation(op);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Proofline API',
      version: APP_VERSION,
      summary: 'Publish records to a blockchain and prove them.',
      description:
        'Linked and independent records published as Bitcoin SV transactions with TSC Merkle proofs, identity API keys and verifier claims. ' +
        'Errors are RFC 7807 problem+json with an `errorCode`; every operation lists its codes. Any route also answers 404 `ROUTE_NOT_FOUND` for an unknown path, ' +
        '400 `BAD_REQUEST` / 431 `REQUEST_HEADER_FIELDS_TOO_LARGE` for requests the HTTP parser refuses, and 500 `INTERNAL_ERROR` only for a real server fault.',
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
