/**
 * The OpenAPI 3.1 description of every REST endpoint, served at /api/v1/openapi.json and
 * rendered at /api/v1/docs. A test validates it with an OpenAPI validator and checks that its
 * operations are exactly the routes the app really has.
 */
import { APP_VERSION } from '@proofline/shared-config';

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const problem = (description: string): Json => ({ description, content: { 'application/problem+json': { schema: ref('Problem') } } });
const json = (description: string, schema: Json, headers?: Json): Json => ({ description, content: { 'application/json': { schema } }, ...(headers ? { headers } : {}) });

const TX_ID: Json = { type: 'string', pattern: '^[0-9a-fA-F]{64}$', description: 'Transaction id: 64 hex characters.' };
const txIdParam = (description: string): Json => ({ name: 'txId', in: 'path', required: true, description, schema: TX_ID });
const encodeParam: Json = {
  name: 'encode',
  in: 'query',
  required: false,
  description: 'Encoders joined by `|`, each with an optional salt in round brackets, e.g. `SHA256(my-salt)|Base64`. Salt characters: A-Z a-z 0-9 / : - + (send `+` as %2B). Omit to publish unencoded (when the `unencoded` feature is on).',
  schema: { type: 'string', maxLength: 512 },
};
const updateTokenParam: Json = { name: 'updateToken', in: 'query', required: false, description: 'Token returned when the record named by txId was written; optional.', schema: { type: 'string', maxLength: 128 } };
const rawBody = (description: string): Json => ({ required: true, description, content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } });

const AUTH_ERRORS: Json = {
  '401': problem('Missing, malformed, unknown, revoked or expired API key.'),
  '403': problem('The key lacks the permission, or the feature is not enabled.'),
};
const TX_ERRORS: Json = {
  '400': problem('Malformed txId or parameter (TX_ID_PARAM_INVALID, ENCODE_PARAM_INVALID, ...).'),
  '404': problem('Unknown txId (TX_NOT_FOUND).'),
};
const WRITE_ERRORS: Json = {
  '400': problem('Bad encode parameter, empty body (CONTENT_IS_REQUIRED), bad txId or updateToken.'),
  '413': problem('Body larger than MAX_RECORD_BYTES (CONTENT_LENGTH_LIMIT_EXCEEDED).'),
  '415': problem('Body not sent as application/octet-stream.'),
  '503': problem('Redis or the queue is unavailable; retry after Retry-After seconds.'),
};
const contentHeaders: Json = {
  'Content-Type': { schema: { type: 'string' }, description: 'Content type of the final encoding step (unencoded: application/octet-stream).' },
  'Content-Length': { schema: { type: 'integer' } },
  ETag: { schema: { type: 'string' }, description: 'The txId, quoted.' },
};
const ifNoneMatchParam: Json = { name: 'If-None-Match', in: 'header', required: false, description: 'The ETag (quoted txId) of bytes the client already holds: 304 without a body.', schema: { type: 'string' } };
const notModified: Json = { description: 'The client already holds these bytes (If-None-Match).', headers: { ETag: { schema: { type: 'string' } } } };
const legacyHeaders: Json = {
  Deprecation: { schema: { type: 'string', const: 'true' } },
  Sunset: { schema: { type: 'string' }, description: 'HTTP date of the sunset instant (default Thu, 01 Oct 2026 00:00:00 GMT).' },
  Link: { schema: { type: 'string' }, description: 'The successor operation, rel="successor-version".' },
};

const keySecurity = [{ ApiKey: [] }];
const keyIdParam: Json = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const legacyIdParam: Json = { name: 'apiKeyId', in: 'path', required: true, description: 'Legacy numeric id. A UUID answers 400: identity keys are managed through the identity endpoints.', schema: { type: 'string', pattern: '^[0-9]+$' } };

function legacy(op: Json, summary: string): Json {
  const responses = { ...(op['responses'] as Json), '410': problem('The legacy endpoints are removed after the sunset instant.') };
  for (const r of Object.values(responses) as Json[]) r['headers'] = { ...(r['headers'] as Json | undefined), ...legacyHeaders };
  return { ...op, summary, deprecated: true, tags: ['Legacy keys (deprecated)'], security: keySecurity, responses };
}

export function openApiDocument(): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Proofline API',
      version: APP_VERSION,
      summary: 'Publish records to a blockchain and prove them.',
      description: 'Linked and independent records published as Bitcoin SV transactions with TSC Merkle proofs, identity API keys and verifier claims. Errors are RFC 7807 problem+json with an errorCode.',
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'Linked records' },
      { name: 'Independent records' },
      { name: 'Identity API keys' },
      { name: 'Legacy keys (deprecated)' },
      { name: 'Verifier' },
      { name: 'Health' },
    ],
    paths: {
      '/api/v1/linkedrecords': {
        post: {
          tags: ['Linked records'], operationId: 'createLinkedRecord', summary: 'Create a linked record (the first version of a chain).', security: keySecurity,
          parameters: [encodeParam], requestBody: rawBody('The record bytes.'),
          responses: { '200': json('Accepted; publication follows asynchronously.', ref('LinkedWriteResult')), ...AUTH_ERRORS, ...WRITE_ERRORS },
        },
      },
      '/api/v1/linkedrecords/{txId}/update': {
        post: {
          tags: ['Linked records'], operationId: 'updateLinkedRecord', summary: 'Append a new version to a chain.', security: keySecurity,
          parameters: [txIdParam('The chain end to update.'), encodeParam, updateTokenParam], requestBody: rawBody('The new version.'),
          responses: { '200': json('Accepted.', ref('LinkedWriteResult')), ...AUTH_ERRORS, ...WRITE_ERRORS, '404': problem('Unknown txId.'), '409': problem('The record is not the end of its chain (NOT_LINKED_RECORDS_END).') },
        },
      },
      '/api/v1/linkedrecords/{txId}/delete': {
        post: {
          tags: ['Linked records'], operationId: 'deleteLinkedRecord', summary: 'Terminate a chain with an empty transaction.', security: keySecurity,
          parameters: [txIdParam('The chain end to delete.'), updateTokenParam],
          responses: { '200': json('Accepted.', ref('DeleteResult')), ...AUTH_ERRORS, ...TX_ERRORS, '409': problem('The record is not the end of its chain (NOT_LINKED_RECORDS_END).') },
        },
      },
      '/api/v1/linkedrecords/{txId}/status': {
        get: {
          tags: ['Linked records'], operationId: 'linkedRecordStatus', summary: 'Confirmation and updatability.', security: keySecurity, parameters: [txIdParam('A linked record.')],
          responses: { '200': json('Status.', ref('LinkedStatus')), ...AUTH_ERRORS, ...TX_ERRORS },
        },
      },
      '/api/v1/linkedrecords/{txId}/content': {
        get: {
          tags: ['Linked records'], operationId: 'linkedRecordContent', summary: 'The bytes on chain (possibly not yet confirmed).', security: keySecurity, parameters: [txIdParam('A linked record.'), ifNoneMatchParam],
          responses: { '200': { description: 'The record bytes.', headers: contentHeaders, content: { '*/*': { schema: { type: 'string' } } } }, '304': notModified, ...AUTH_ERRORS, ...TX_ERRORS },
        },
        head: {
          tags: ['Linked records'], operationId: 'linkedRecordContentHead', summary: 'Length and type of the record.', security: keySecurity, parameters: [txIdParam('A linked record.'), ifNoneMatchParam],
          responses: { '200': { description: 'Headers only.', headers: contentHeaders }, '304': notModified, ...AUTH_ERRORS, ...TX_ERRORS },
        },
      },
      '/api/v1/linkedrecords/{txId}/match': {
        post: {
          tags: ['Linked records'], operationId: 'matchLinkedRecord', summary: 'Does this content (and link) match the record?', security: keySecurity,
          parameters: [txIdParam('The record to compare with.'), encodeParam, { name: 'prevTxId', in: 'query', required: false, description: 'For an update or delete: the record it updates or deletes. Omit for a create.', schema: TX_ID }],
          requestBody: rawBody('The content to compare.'),
          responses: { '200': json('Match result.', ref('MatchResult')), ...AUTH_ERRORS, ...WRITE_ERRORS, '404': problem('Unknown txId.') },
        },
      },
      '/api/v1/linkedrecords/{txId}/navigate': {
        get: {
          tags: ['Linked records'], operationId: 'navigateLinkedRecords', summary: 'Walk the chain from txId (excluded).', security: keySecurity,
          parameters: [txIdParam('The start.'), { name: 'links', in: 'query', required: true, description: 'Non-zero integer: the sign is the direction (positive later, negative earlier), the magnitude the maximum count (at most MAX_LINKS).', schema: { type: 'integer' } }],
          responses: { '200': json('Links.', ref('NavigateResult')), ...AUTH_ERRORS, ...TX_ERRORS },
        },
      },
      '/api/v1/records': {
        post: {
          tags: ['Independent records'], operationId: 'writeRecord', summary: 'Write an independent record.', security: keySecurity,
          parameters: [encodeParam], requestBody: rawBody('The record bytes.'),
          responses: { '200': json('Accepted; publication follows asynchronously.', ref('RecordWriteResult')), ...AUTH_ERRORS, ...WRITE_ERRORS },
        },
      },
      '/api/v1/records/{txId}/status': {
        get: {
          tags: ['Independent records'], operationId: 'recordStatus', summary: 'Confirmation of an independent record.', security: keySecurity, parameters: [txIdParam('An independent record.')],
          responses: { '200': json('Status.', ref('RecordStatus')), ...AUTH_ERRORS, ...TX_ERRORS },
        },
      },
      '/api/v1/records/{txId}/content': {
        get: {
          tags: ['Independent records'], operationId: 'recordContent', summary: 'The bytes on chain.', security: keySecurity, parameters: [txIdParam('An independent record.'), ifNoneMatchParam],
          responses: { '200': { description: 'The record bytes.', headers: contentHeaders, content: { '*/*': { schema: { type: 'string' } } } }, '304': notModified, ...AUTH_ERRORS, ...TX_ERRORS },
        },
        head: {
          tags: ['Independent records'], operationId: 'recordContentHead', summary: 'Length and type of the record.', security: keySecurity, parameters: [txIdParam('An independent record.'), ifNoneMatchParam],
          responses: { '200': { description: 'Headers only.', headers: contentHeaders }, '304': notModified, ...AUTH_ERRORS, ...TX_ERRORS },
        },
      },
      '/api/v1/records/{txId}/match': {
        post: {
          tags: ['Independent records'], operationId: 'matchRecord', summary: 'Does this content match the record?', security: keySecurity,
          parameters: [txIdParam('The record to compare with.'), encodeParam], requestBody: rawBody('The content to compare.'),
          responses: { '200': json('Match result.', ref('MatchResult')), ...AUTH_ERRORS, ...WRITE_ERRORS, '404': problem('Unknown txId.') },
        },
      },
      '/api/v1/auth/identity-api-keys': {
        post: {
          tags: ['Identity API keys'], operationId: 'createIdentityApiKey', summary: 'Create a key; the raw key is returned only here.', security: keySecurity,
          requestBody: { required: true, content: { 'application/json': { schema: ref('CreateKeyRequest') } } },
          responses: {
            '201': json('Created.', ref('IdentityApiKeyWithRawKey')),
            '400': problem('Invalid body: name length, unknown permission, neither permission.'),
            '401': problem('Bad credentials.'),
            '403': problem('identity_api_key_privilege_escalation, identity_api_key_limit_exceeded, or lacking an admin permission.'),
            '415': problem('Body not JSON.'),
            '503': problem('The key worker did not answer in time; nothing was created.'),
          },
        },
        get: {
          tags: ['Identity API keys'], operationId: 'listIdentityApiKeys', summary: "The tenant's keys, newest first, legacy keys mapped in.", security: keySecurity,
          responses: { '200': json('Keys.', { type: 'array', items: ref('IdentityApiKey') }), ...AUTH_ERRORS },
        },
      },
      '/api/v1/auth/identity-api-keys/usage': {
        get: {
          tags: ['Identity API keys'], operationId: 'identityApiKeyUsage', summary: 'Keys used and the shared limit.', security: keySecurity,
          responses: { '200': json('Usage.', ref('Usage')), ...AUTH_ERRORS },
        },
      },
      '/api/v1/auth/identity-api-keys/{id}': {
        delete: {
          tags: ['Identity API keys'], operationId: 'deleteIdentityApiKey', summary: 'Delete a key (frees its slot).', security: keySecurity, parameters: [keyIdParam],
          responses: { '204': { description: 'Deleted.' }, '400': problem('Malformed id.'), ...AUTH_ERRORS, '404': problem('Unknown key.') },
        },
      },
      '/api/v1/auth/identity-api-keys/{id}/revoke': {
        post: {
          tags: ['Identity API keys'], operationId: 'revokeIdentityApiKey', summary: 'Revoke (isRevoked true) or re-activate (false); idempotent.', security: keySecurity, parameters: [keyIdParam],
          requestBody: { required: true, content: { 'application/json': { schema: ref('RevokeRequest') } } },
          responses: { '201': json('The updated key.', ref('IdentityApiKey')), '400': problem('Malformed id or body.'), ...AUTH_ERRORS, '404': problem('Unknown key.') },
        },
      },
      '/api/v1/psp/product-manager/customer-user-api-keys': {
        post: legacy({
          operationId: 'legacyCreateKey',
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 3, maxLength: 32 } }, additionalProperties: false } } } },
          responses: { '201': json('An identity key (UUID id) in the legacy shape, with rawKey.', ref('LegacyKeyWithRawKey')), '400': problem('Invalid body.'), ...AUTH_ERRORS },
        }, 'Deprecated: use POST /api/v1/auth/identity-api-keys.'),
        get: legacy({ operationId: 'legacyListKeys', responses: { '200': json('Keys in the legacy shape.', { type: 'array', items: ref('LegacyKey') }), ...AUTH_ERRORS } }, 'Deprecated: use GET /api/v1/auth/identity-api-keys.'),
      },
      '/api/v1/psp/product-manager/customer-user-api-keys/usage': {
        get: legacy({ operationId: 'legacyUsage', responses: { '200': json('Usage.', ref('Usage')), ...AUTH_ERRORS } }, 'Deprecated: use GET /api/v1/auth/identity-api-keys/usage.'),
      },
      '/api/v1/psp/product-manager/customer-user-api-keys/{apiKeyId}': {
        delete: legacy({ operationId: 'legacyDeleteKey', parameters: [legacyIdParam], responses: { '204': { description: 'Deleted.' }, '400': problem('A UUID id: manage identity keys through the identity endpoints.'), ...AUTH_ERRORS, '404': problem('Unknown key.') } }, 'Deprecated: use DELETE /api/v1/auth/identity-api-keys/{id}.'),
        patch: legacy({
          operationId: 'legacyUpdateKeyStatus',
          parameters: [legacyIdParam],
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['status'], properties: { status: { enum: ['Active', 'Disabled'] } }, additionalProperties: false } } } },
          responses: { '200': json('The updated key in the legacy shape.', ref('LegacyKey')), '400': problem('A UUID id or an invalid body.'), ...AUTH_ERRORS, '404': problem('Unknown key.') },
        }, 'Deprecated: use POST /api/v1/auth/identity-api-keys/{id}/revoke.'),
      },
      '/auth/granted-claims': {
        get: {
          tags: ['Verifier'], operationId: 'grantedClaims', summary: 'Claims granted to the bearer of the token.', security: [{ Bearer: [] }, {}],
          responses: { '200': json('Claims (empty without credentials).', ref('GrantedClaims')), '401': problem('invalid authentication credentials') },
        },
      },
      '/api/v1/auth/granted-claims': {
        get: {
          tags: ['Verifier'], operationId: 'grantedClaimsV1', summary: 'Same as /auth/granted-claims.', security: [{ Bearer: [] }, {}],
          responses: { '200': json('Claims (empty without credentials).', ref('GrantedClaims')), '401': problem('invalid authentication credentials') },
        },
      },
      '/liveness': { get: { tags: ['Health'], operationId: 'liveness', responses: { '200': { description: 'Healthy', content: { 'text/plain': { schema: { type: 'string', const: 'Healthy' } } } } } } },
      '/readiness': {
        get: {
          tags: ['Health'], operationId: 'readiness',
          responses: { '200': json('Redis and at least one worker are up.', ref('Readiness')), '503': json('Not ready.', ref('Readiness')) },
        },
      },
      '/metrics': { get: { tags: ['Health'], operationId: 'metrics', summary: 'Prometheus metrics: requests by route pattern and status, latency histogram, BullMQ job counts, records pending publication, chain tip height, process metrics.', responses: { '200': { description: 'Prometheus text exposition format.', content: { 'text/plain': { schema: { type: 'string' } } } }, '503': problem('A source (Redis) did not answer.') } } },
      '/api/v1/docs': { get: { tags: ['Health'], operationId: 'apiDocs', summary: 'Interactive API documentation (Swagger UI).', responses: { '200': { description: 'HTML page.', content: { 'text/html': { schema: { type: 'string' } } } } } } },
      '/api/v1/openapi.json': { get: { tags: ['Health'], operationId: 'openApiDocument', responses: { '200': json('This document.', { type: 'object' }) } } },
    },
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An identity API key: idty_ followed by 32 letters or digits.' },
        Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
      schemas: {
        Problem: {
          type: 'object',
          required: ['type', 'title', 'status', 'detail', 'errorCode'],
          properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' }, errorCode: { type: 'string' }, instance: { type: 'string' } },
        },
        Encoding: { type: 'object', required: ['contentType', 'output'], properties: { contentType: { type: 'string' }, output: { type: 'string' } } },
        LinkedWriteResult: { type: 'object', required: ['txId', 'updateToken', 'encoding'], properties: { txId: TX_ID, updateToken: { type: 'string' }, encoding: { type: 'array', items: ref('Encoding') } } },
        RecordWriteResult: { type: 'object', required: ['txId', 'encoding'], properties: { txId: TX_ID, encoding: { type: 'array', items: ref('Encoding') } } },
        DeleteResult: { type: 'object', required: ['txId'], properties: { txId: TX_ID } },
        MerkleProof: {
          type: 'object',
          description: 'TSC Merkle proof (JSON form).',
          required: ['index', 'txOrId', 'target', 'nodes', 'targetType', 'proofType', 'composite'],
          properties: {
            index: { type: 'integer' },
            txOrId: { type: 'string' },
            target: { type: 'string', description: 'The 80-byte block header, hex.' },
            nodes: { type: 'array', items: { type: 'string' }, description: 'Sibling hashes from the leaf up; "*" for a duplicated node.' },
            targetType: { type: 'string', enum: ['header'] },
            proofType: { type: 'string', enum: ['branch'] },
            composite: { type: 'boolean' },
          },
        },
        Confirmation: {
          type: 'object',
          required: ['confirmedBlocks', 'blockHash', 'blockTimestamp', 'merkleProof'],
          properties: { confirmedBlocks: { type: 'integer', minimum: 1 }, blockHash: { type: 'string' }, blockTimestamp: { type: 'string', format: 'date-time' }, merkleProof: ref('MerkleProof') },
        },
        LinkedStatus: { type: 'object', required: ['confirmation', 'updatable'], properties: { confirmation: { oneOf: [ref('Confirmation'), { type: 'null' }] }, updatable: { type: 'boolean' }, publication: ref('Publication') } },
        RecordStatus: { type: 'object', required: ['confirmation'], properties: { confirmation: { oneOf: [ref('Confirmation'), { type: 'null' }] }, publication: ref('Publication') } },
        Publication: { type: 'string', enum: ['pending', 'published', 'failed'], description: 'Where the transaction is: accepted and queued, in the mempool or mined, or permanently rejected by the chain.' },
        MatchResult: { type: 'object', required: ['match', 'confirmation'], properties: { match: { type: 'boolean' }, confirmation: { oneOf: [ref('Confirmation'), { type: 'null' }] } } },
        NavigateResult: { type: 'object', required: ['txIds', 'endOfLinks', 'maxLinksRequestable'], properties: { txIds: { type: 'array', items: TX_ID }, endOfLinks: { type: 'boolean' }, maxLinksRequestable: { type: 'integer' } } },
        Permission: { type: 'string', enum: ['Issuer_Admin', 'Issuer_User', 'Issuer_Auditor', 'Verifier_Admin', 'Verifier_User', 'Verifier_Auditor'] },
        CreateKeyRequest: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          description: 'At least one of issuerPermission and verifierPermission.',
          properties: {
            name: { type: 'string', minLength: 3, maxLength: 32 },
            issuerPermission: { type: 'string', enum: ['Issuer_Admin', 'Issuer_User', 'Issuer_Auditor'] },
            verifierPermission: { type: 'string', enum: ['Verifier_Admin', 'Verifier_User', 'Verifier_Auditor'] },
          },
        },
        RevokeRequest: { type: 'object', required: ['isRevoked'], additionalProperties: false, properties: { isRevoked: { type: 'boolean' } } },
        IdentityApiKey: {
          type: 'object',
          required: ['id', 'name', 'keyMask', 'permissions', 'expiresAt', 'revokedAt', 'createdBy', 'createdAt', 'updatedAt'],
          properties: {
            id: { type: 'string', format: 'uuid' },
            name: { type: 'string' },
            keyMask: { type: 'string', examples: ['idty_****************************AbC9'] },
            permissions: { type: 'array', items: ref('Permission') },
            expiresAt: { type: 'string', format: 'date-time' },
            revokedAt: { type: ['string', 'null'], format: 'date-time' },
            createdBy: { type: 'string' },
            createdAt: { type: 'string', format: 'date-time' },
            updatedAt: { type: 'string', format: 'date-time' },
          },
        },
        IdentityApiKeyWithRawKey: { allOf: [ref('IdentityApiKey'), { type: 'object', required: ['rawKey'], properties: { rawKey: { type: 'string', pattern: '^idty_[A-Za-z0-9]{32}$' } } }] },
        LegacyKey: {
          type: 'object',
          required: ['id', 'name', 'status', 'createdAt', 'expiresAt'],
          properties: {
            id: { type: 'string', description: 'Numeric for imported legacy keys, a UUID for identity keys.' },
            name: { type: 'string' },
            status: { type: 'string', enum: ['Active', 'Disabled'] },
            keyMask: { type: 'string' },
            permissions: { type: 'array', items: ref('Permission') },
            createdAt: { type: 'string', format: 'date-time' },
            expiresAt: { type: 'string', format: 'date-time' },
          },
        },
        LegacyKeyWithRawKey: { allOf: [ref('LegacyKey'), { type: 'object', required: ['rawKey'], properties: { rawKey: { type: 'string' } } }] },
        Usage: { type: 'object', required: ['used', 'limit'], properties: { used: { type: 'integer' }, limit: { type: 'integer' } } },
        GrantedClaims: { type: 'object', required: ['grantedClaims'], properties: { grantedClaims: { type: 'array', items: { type: 'string' } } } },
        Readiness: { type: 'object', required: ['status', 'appVersion'], properties: { status: { type: 'string' }, appVersion: { type: 'string' }, checks: { type: 'object' } } },
      },
    },
  };
}
