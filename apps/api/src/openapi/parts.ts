/**
 * The shared vocabulary of the route declarations: examples (each checked against its schema by
 * document.spec.ts), headers, parameters, bodies and the problem sets most routes answer. A route
 * declares its own request, responses and errors with these (`route.ts`); nothing here is
 * mutated by the document generator.
 */
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { BodyDecl, Json, Param, ProblemSpec, Problems, ResponseDecl, RouteDecl, Schema } from './route';
import { EncodeParam, IdempotencyKeyHeader, LegacyIdParam, TxId, UpdateTokenParam } from './schemas';

// ---- Examples (validated against their schemas by document.spec.ts) --------------------------

export const EX_TX = createHash('sha256').update('example record').digest('hex');
export const EX_TX2 = createHash('sha256').update('example record v2').digest('hex');
export const EX_HEADER = '00000020' + 'ab'.repeat(32) + 'cd'.repeat(32) + '6a1e5f65' + 'ffff7f20' + '02000000';
export const EX_BLOCK = '3e5c'.repeat(16);
export const EX_SHA = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
export const EX_ENCODING = [{ contentType: 'application/octet-stream; event-encoded=SHA256', output: EX_SHA }];
export const EX_PROOF = {
  index: 1,
  txOrId: EX_TX,
  target: EX_HEADER,
  nodes: ['*', EX_TX2],
  targetType: 'header',
  proofType: 'branch',
  composite: false,
};
export const EX_CONFIRMATION = {
  confirmedBlocks: 3,
  blockHash: EX_BLOCK,
  blockTimestamp: '2026-11-23T10:15:00.000Z',
  merkleProof: EX_PROOF,
};
export const EX_KEY = {
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
export const EX_LEGACY = {
  id: 101,
  name: 'old integration',
  status: 'Active',
  createdAt: '2024-03-01T00:00:00.000Z',
  expiresAt: '2026-12-31T00:00:00.000Z',
  keyMask: '************7x9Q',
  permissions: ['Issuer_User'],
};
export const EX_RAW_KEY = 'idty_Q3v9XkP2mB7nR4tY8wZ1cD6fG0hJ5sLa';

// ---- Headers (a fresh object on every call) ---------------------------------------------------

export const retryAfter = (): Json => ({
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 1 },
    example: 1,
  },
});
export const rateLimitHeaders = (): Json => ({
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
export const legacyHeaders = (): Json => ({
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
export const replayedHeader = (): Json => ({
  'Idempotent-Replayed': {
    description: '`true` when this is the recorded answer of an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', const: 'true' },
    example: 'true',
  },
});
export const challengeHeader = (): Json => ({
  'WWW-Authenticate': {
    required: true,
    schema: { type: 'string' },
    example: 'Basic realm="Proofline queues", charset="UTF-8"',
  },
});
export const contentHeaders = (): Json => ({
  'Content-Type': {
    description: 'Content type of the final encoding step (unencoded: application/octet-stream).',
    schema: { type: 'string' },
    example: 'text/plain; event-encoded=Base64',
  },
  'Content-Length': { schema: { type: 'integer', minimum: 0 }, example: 16 },
  ETag: { description: 'The txId, quoted.', schema: { type: 'string' }, example: `"${EX_TX}"` },
});

// ---- Parameters -------------------------------------------------------------------------------

export const txIdParam = (description: string): Param => ({
  name: 'txId',
  description,
  schema: TxId,
  example: EX_TX,
});
export const encodeParam = (): Param => ({
  name: 'encode',
  description:
    'Encoders joined by `|`, each with an optional salt in round brackets, e.g. `SHA256(my-salt)|Base64`. Salt characters: A-Z a-z 0-9 / : - + (send `+` as %2B). Omit to publish unencoded (when the `unencoded` feature is on).',
  schema: EncodeParam,
  example: 'SHA256',
});
export const updateTokenParam = (): Param => ({
  name: 'updateToken',
  description:
    'Token returned when the record named by txId was written; optional for a writer of the tenant that created the chain.',
  schema: UpdateTokenParam,
  example: 'utk_' + 'x'.repeat(43),
});
export const idempotencyKeyParam = (): Param => ({
  name: 'Idempotency-Key',
  description:
    'Makes the write safe to retry: 1–255 visible ASCII characters, unique per request (a UUID). The same key with the same request answers the first answer again for 24 hours and writes nothing more; with another request it is 422; while the first is still running, 409 with Retry-After (after a wait of up to 5 s).',
  schema: IdempotencyKeyHeader,
  example: '5b0d8c2e-1f4a-4c3b-9e7d-2a6f8b1c0d9e',
});
export const ifNoneMatchParam = (): Param => ({
  name: 'If-None-Match',
  description: 'The ETag (quoted txId) of bytes the client already holds: 304 without a body.',
  schema: { type: 'string' },
  example: `"${EX_TX}"`,
});
export const keyIdParam = (): Param => ({
  name: 'id',
  description: 'The key id (UUID).',
  schema: { type: 'string', format: 'uuid' },
  example: EX_KEY.id,
});
export const legacyIdParam = (): Param => ({
  name: 'apiKeyId',
  description: 'Legacy numeric id. A UUID answers 400: identity keys are managed through the identity endpoints.',
  schema: LegacyIdParam,
  example: '101',
});

// ---- Request bodies ---------------------------------------------------------------------------

export const rawBody = (description: string, example: string): BodyDecl => ({
  required: true,
  description,
  content: {
    'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' }, example },
  },
});
export const jsonRequest = (schema: z.ZodType, example: unknown): BodyDecl => ({
  required: true,
  content: { 'application/json': { schema, example } },
});

// ---- Responses --------------------------------------------------------------------------------

/** Merges problem sets: codes of one status are united, reasons joined. */
export function problems(...sets: Problems[]): Problems {
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

export const json = (description: string, schema: Schema, example: unknown, headers?: Json): ResponseDecl => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema, example } },
});
export const text = (
  description: string,
  type: string,
  example: string,
  schema: Schema = { type: 'string' },
): ResponseDecl => ({
  description,
  content: { [type]: { schema, example } },
});

// ---- Problem sets -----------------------------------------------------------------------------

/** Any route but /liveness and /readiness while the process starts and Redis is not reachable yet. */
export const STARTING: Problems = {
  503: {
    codes: ['REDIS_UNAVAILABLE'],
    why: 'The process is starting and Redis is not reachable yet.',
    headers: retryAfter,
  },
};
export const UNAVAILABLE: Problems = {
  503: {
    codes: ['REDIS_UNAVAILABLE', 'STORE_UNAVAILABLE'],
    why: 'Redis did not answer; retry after Retry-After seconds.',
    headers: retryAfter,
  },
};
export const KEY_AUTH: Problems = {
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
export const permission = (who: string): Problems => ({
  403: { codes: ['PERMISSION_DENIED'], why: `The key lacks the permission (${who}).` },
});
export const WRITER = problems(KEY_AUTH, permission('Issuer_Admin or Issuer_User'));
export const READER = KEY_AUTH;
export const KEY_ADMIN = problems(KEY_AUTH, permission('Issuer_Admin or Verifier_Admin'));
export const TX: Problems = {
  400: { codes: ['TX_ID_PARAM_INVALID'], why: 'txId is not 64 hex characters.' },
  404: { codes: ['TX_NOT_FOUND'], why: 'No record has this txId.' },
};
export const FAMILY: Problems = {
  400: { codes: ['TX_INCORRECT_EVENT_TRANSACTION_TYPE'], why: 'The txId is a record of the other family.' },
};
export const feature = (what: string): Problems => ({
  403: { codes: ['FEATURE_NOT_ENABLED'], why: `The ${what} feature is not enabled (FEATURES); it needs an upgrade.` },
});
export const ENCODE: Problems = {
  400: {
    codes: ['ENCODE_PARAM_INVALID', 'UNKNOWN_ENCODER', 'ENCODER_SHA256_MISSING'],
    why: 'Bad encode parameter, an unknown or disabled encoder, or no encoder while unencoded records are disabled.',
  },
};
export const RECORD_BODY: Problems = {
  400: { codes: ['CONTENT_IS_REQUIRED', 'BAD_REQUEST'], why: 'Empty or unreadable body.' },
  413: { codes: ['CONTENT_LENGTH_LIMIT_EXCEEDED'], why: 'Body larger than MAX_RECORD_BYTES.' },
  415: { codes: ['UNSUPPORTED_MEDIA_TYPE'], why: 'Body not sent as application/octet-stream.' },
};
export const IDEMPOTENCY: Problems = {
  400: { codes: ['IDEMPOTENCY_KEY_INVALID'], why: 'Idempotency-Key is not 1–255 visible ASCII characters.' },
  409: {
    codes: ['IDEMPOTENCY_KEY_IN_PROGRESS'],
    why: 'A request with this Idempotency-Key is still running.',
    headers: retryAfter,
  },
  422: { codes: ['IDEMPOTENCY_KEY_REUSED'], why: 'This Idempotency-Key was used with another request.' },
};
export const BACKLOG: Problems = {
  503: {
    codes: ['PUBLICATION_BACKLOG_FULL', 'FUNDING_EXHAUSTED', 'FEE_POLICY_UNKNOWN'],
    why: "More than MAX_PENDING_PUBLICATIONS records wait for publication, the funding pool is empty, or (testnet, mainnet) ARC's fee policy is not known yet; nothing was stored.",
    headers: retryAfter,
  },
};
/** A write whose transaction carries the record (not a delete). */
export const POLICY_SIZE: Problems = {
  413: {
    codes: ['RECORD_TOO_LARGE_FOR_POLICY'],
    why: "The record's transaction or data output script would be larger than ARC's policy accepts (maxtxsizepolicy, maxscriptsizepolicy); nothing was stored.",
  },
};
export const CHAIN_END: Problems = {
  409: { codes: ['NOT_LINKED_RECORDS_END'], why: 'The record is not the end of its chain (or the chain was deleted).' },
};
export const CHAIN_DEPTH: Problems = {
  409: {
    codes: ['CHAIN_UNCONFIRMED_DEPTH'],
    why: 'The chain already holds MAX_UNCONFIRMED_LINKS unconfirmed versions; retry once a block confirms its earlier ones.',
    headers: retryAfter,
  },
};
export const TOKEN: Problems = {
  400: { codes: ['UPDATE_TOKEN_PARAM_INVALID'], why: 'Wrong updateToken.' },
  403: { codes: ['FORBIDDEN'], why: 'Another tenant without the updateToken.' },
};
export const JSON_BODY: Problems = {
  400: {
    codes: ['VALIDATION_FAILED', 'BODY_INVALID_JSON'],
    why: 'The body is not what the endpoint takes (the detail names the field).',
  },
  413: { codes: ['CONTENT_LENGTH_LIMIT_EXCEEDED'], why: 'JSON body over 16 KiB.' },
  415: { codes: ['UNSUPPORTED_MEDIA_TYPE'], why: 'Body not sent as application/json.' },
};
export const ESCALATION: Problems = {
  403: {
    codes: ['identity_api_key_privilege_escalation'],
    why: 'A permission above the calling key’s own on either side.',
  },
};
export const KEY_ID: Problems = {
  400: { codes: ['API_KEY_ID_INVALID'], why: 'The id is not a UUID.' },
  404: { codes: ['API_KEY_NOT_FOUND'], why: 'No key with this id in the caller’s tenant.' },
};
export const LEGACY: Problems = {
  410: { codes: ['LEGACY_ENDPOINT_REMOVED'], why: 'The legacy endpoints are removed after LEGACY_SUNSET.' },
};

// ---- Records ----------------------------------------------------------------------------------

export const WRITE_NOTE =
  'Accepted at once (the txId is known); publication and confirmation follow asynchronously. Send an Idempotency-Key to retry safely.';

/**
 * POST of a records router's base: a first write of the record bytes (`example`), answering `ok`;
 * the refusals every first write shares, with the family's own (`family`) after the writer's.
 */
export function firstWriteRoute(
  summary: string,
  example: string,
  ok: ResponseDecl,
  ...family: Problems[]
): RouteDecl & { method: 'post' } {
  return {
    method: 'post',
    path: '',
    security: 'key',
    summary,
    description: WRITE_NOTE,
    request: { query: [encodeParam()], headers: [idempotencyKeyParam()], body: rawBody('The record bytes.', example) },
    responses: { '200': ok },
    errors: problems(WRITER, ...family, ENCODE, RECORD_BODY, POLICY_SIZE, IDEMPOTENCY, BACKLOG),
  };
}

/**
 * POST of `…/{txId}/match`: does this content (`example`) match the record; `query` and `errors`
 * are the family's own parameters and refusals beside the ones every match shares.
 */
export function matchRoute(
  summary: string,
  example: string,
  ok: ResponseDecl,
  own: { query?: Param[]; errors?: Problems[] } = {},
): RouteDecl & { method: 'post' } {
  return {
    method: 'post',
    path: '/{txId}/match',
    security: 'key',
    summary,
    request: {
      params: [txIdParam('The record to compare with.')],
      query: [encodeParam(), ...(own.query ?? [])],
      body: rawBody('The content to compare.', example),
    },
    responses: { '200': ok },
    errors: problems(READER, TX, FAMILY, feature('verify'), ENCODE, RECORD_BODY, ...(own.errors ?? [])),
  };
}

/** GET and HEAD of `…/{txId}/content`: the bytes, or their length and type. */
export function contentRoutes(
  record: string,
  summary: string,
  errors: Problems,
): { get: RouteDecl & { method: 'get' }; head: RouteDecl & { method: 'head' } } {
  const request = { params: [txIdParam(record)], headers: [ifNoneMatchParam()] };
  const route = { path: '/{txId}/content', security: 'key', request, errors } as const;
  return {
    get: { ...route, method: 'get', summary, responses: { '200': contentOk(), '304': notModified() } },
    head: {
      ...route,
      method: 'head',
      summary: 'Length and type of the record.',
      responses: { '200': headOk(), '304': notModified() },
    },
  };
}

/** 200 of GET …/content: the bytes as on chain. */
const contentOk = (): ResponseDecl => ({
  description:
    'The record bytes, exactly as on chain, typed as the final encoding step (unencoded: application/octet-stream).',
  headers: contentHeaders(),
  content: { '*/*': { schema: { type: 'string' }, example: 'djE=' } },
});
/** 200 of HEAD …/content. */
const headOk = (): ResponseDecl => ({ description: 'Headers only.', headers: contentHeaders() });
/** 304 of GET and HEAD …/content. */
const notModified = (): ResponseDecl => ({
  description: 'The client already holds these bytes (If-None-Match).',
  headers: { ETag: { schema: { type: 'string' }, example: `"${EX_TX}"` } },
});
