import { randomUUID } from 'node:crypto';
import { importLegacyKeys } from '@proofline/identity-feature';
import type { RunningKeyWorker } from '@proofline/identity-feature';
import { sharedKeys } from '@proofline/shared-redis';
import { buildPages, eventually } from '@proofline/shared-testing';
import { IdempotencyStore, requestFingerprint } from '../idempotency';
import { seedKey, startApi, startKeyWorker } from '../testing/harness';
import type { RunningApi } from '../testing/harness';
import { OpenApiValidator } from '../testing/openapi-validator';
import { startRecordsFixture } from '../testing/records-fixture';
import type { RecordsFixture } from '../testing/records-fixture';
import { openApiDocument } from './document';

type Json = Record<string, unknown>;
interface MediaDoc {
  schema: Json;
}
interface ResponseDoc {
  headers?: Record<string, { required?: boolean }>;
  content?: Record<string, MediaDoc>;
}
interface OperationDoc {
  operationId: string;
  security: Json[];
  responses: Record<string, ResponseDoc>;
}

const doc = openApiDocument();
const paths = doc['paths'] as Record<string, Record<string, OperationDoc>>;
// Literal paths before templated ones: /identity-api-keys/usage is not /identity-api-keys/{id}.
const templates = Object.keys(paths).sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
const templateOf = (path: string) =>
  templates.find((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
const validator = new OpenApiValidator(doc);

/** Every `METHOD template status` a real response was checked for. */
const provoked = new Set<string>();

interface Req {
  readonly key?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Uint8Array;
  readonly type?: string;
}

/**
 * One real HTTP call, checked against the document: the operation and its status are documented,
 * the content type is one the response documents, the body validates against its schema, required
 * headers are present. Returns the parsed JSON (or text).
 */
async function hit(
  base: string,
  method: string,
  pathAndQuery: string,
  expected: number,
  req: Req = {},
): Promise<unknown> {
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (req.key !== undefined) headers['x-api-key'] = req.key;
  if (req.body !== undefined) headers['content-type'] = req.type ?? 'application/octet-stream';
  const res = await fetch(`${base}${pathAndQuery}`, {
    method,
    headers,
    ...(req.body !== undefined ? { body: req.body as unknown as string } : {}),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const path = pathAndQuery.split('?')[0] ?? '';
  const where = `${method} ${path} → ${res.status} ${bytes.toString('utf8').slice(0, 300)}`;
  expect(`${where}`).toMatch(new RegExp(`^${method} \\S+ → ${expected}\\b`));
  const template = templateOf(path);
  expect(`${where} documented as ${template ?? 'nothing'}`).not.toMatch(/documented as nothing$/);
  const op = paths[template as string]?.[method.toLowerCase()];
  expect(`${where}: operation ${op ? 'documented' : 'missing'}`).toMatch(/documented$/);
  const documented = (op as OperationDoc).responses[String(res.status)];
  expect(`${where}: status ${documented ? 'documented' : 'missing'}`).toMatch(/documented$/);
  const response = documented as ResponseDoc;
  for (const [name, h] of Object.entries(response.headers ?? {})) {
    if (h.required) expect(`${where}: header ${name} ${res.headers.has(name) ? 'sent' : 'missing'}`).toMatch(/sent$/);
  }
  provoked.add(`${method} ${template} ${res.status}`);
  const type = (res.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  if (method === 'HEAD' || res.status === 204 || res.status === 304) {
    expect(bytes.length).toBe(0);
    return undefined;
  }
  const content = response.content ?? {};
  const media = content[type] ?? content['*/*'];
  expect(
    `${where}: content type ${type} ${media ? 'documented' : `not in ${Object.keys(content).join(', ')}`}`,
  ).toMatch(/documented$/);
  if (type.endsWith('json')) {
    const body = JSON.parse(bytes.toString('utf8')) as unknown;
    expect(`${where}: ${validator.errors((media as MediaDoc).schema, body).join('; ')}`).toBe(`${where}: `);
    return body;
  }
  const textBody = bytes.toString('utf8');
  expect(`${where}: ${validator.errors((media as MediaDoc).schema, textBody).join('; ')}`).toBe(`${where}: `);
  return textBody;
}

/**
 * Documented responses no request of this spec provokes, and why. Anything documented that is
 * neither provoked nor listed here fails the coverage test.
 */
function notProvokedBecause(_method: string, template: string, status: string): string | undefined {
  if (template === '/verify' && status === '404')
    return 'needs the pages unbuilt (dist/pages removed) while other specs serve them (the route answers PAGE_NOT_BUILT then)';
  if (status === '503')
    return 'needs Redis down, a starting or draining process, a stalled key worker or a full publication backlog (health.spec, records-backpressure.spec, identity-keys.race.spec, multiprocess specs)';
  return undefined;
}

describe('contract: the real app answers what the OpenAPI document says', () => {
  let f: RecordsFixture;
  let keyWorker: RunningKeyWorker;
  /** Same prefix: a per-key limit of 1/1 (every keyed operation's 429). */
  let limited: RunningApi;
  /** Same prefix: the default (past) legacy sunset and only the `unencoded` feature (410s and FEATURE_NOT_ENABLED). */
  let restricted: RunningApi;
  const FUTURE = { LEGACY_SUNSET: '2099-01-01T00:00:00Z', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_LIMIT: '3' };

  beforeAll(async () => {
    buildPages();
    f = await startRecordsFixture(FUTURE);
    keyWorker = await startKeyWorker({
      prefix: f.prefix,
      env: { MAX_LINKS: '5', MAX_RECORD_BYTES: '1024', ...FUTURE },
    });
  }, 60_000);
  afterAll(async () => {
    await restricted?.close();
    await limited?.close();
    await keyWorker.close();
    await f.close();
  });

  it('records: every documented status a client can provoke', async () => {
    const b = f.base;
    const A = f.keys.writerA;
    const L = '/api/v1/linkedrecords';
    const R = '/api/v1/records';
    const unknown = 'f'.repeat(64);
    f.startPublisher();

    // linked create
    const created = (await hit(b, 'POST', `${L}?encode=SHA256`, 200, { key: A, body: 'v1' })) as {
      txId: string;
      updateToken: string;
    };
    await hit(b, 'POST', L, 401, { body: 'v1' });
    await hit(b, 'POST', L, 403, { key: f.keys.auditorA, body: 'v1' });
    await hit(b, 'POST', `${L}?encode=Nope`, 400, { key: A, body: 'v1' });
    await hit(b, 'POST', L, 400, { key: A });
    await hit(b, 'POST', L, 415, { key: A, body: 'v1', type: 'text/plain' });
    await hit(b, 'POST', L, 413, { key: A, body: 'x'.repeat(2000) });
    await hit(b, 'POST', L, 400, { key: A, body: 'v1', headers: { 'idempotency-key': 'has space' } });
    await hit(b, 'POST', L, 200, { key: A, body: 'idem', headers: { 'idempotency-key': 'contract-1' } });
    await hit(b, 'POST', L, 200, { key: A, body: 'idem', headers: { 'idempotency-key': 'contract-1' } });
    await hit(b, 'POST', L, 422, { key: A, body: 'other', headers: { 'idempotency-key': 'contract-1' } });

    // update
    const updated = (await hit(b, 'POST', `${L}/${created.txId}/update?updateToken=${created.updateToken}`, 200, {
      key: A,
      body: 'v2',
    })) as { txId: string; updateToken: string };
    await hit(b, 'POST', `${L}/${created.txId}/update`, 409, { key: A, body: 'v2b' });
    await hit(b, 'POST', `${L}/${updated.txId}/update?updateToken=utk_wrong`, 400, { key: A, body: 'v3' });
    await hit(b, 'POST', `${L}/${updated.txId}/update`, 403, { key: f.keys.writerB, body: 'v3' });
    await hit(b, 'POST', `${L}/${unknown}/update`, 404, { key: A, body: 'v3' });
    await hit(b, 'POST', `${L}/not-a-txid/update`, 400, { key: A, body: 'v3' });
    await hit(b, 'POST', `${L}/${updated.txId}/update`, 413, { key: A, body: 'x'.repeat(2000) });
    await hit(b, 'POST', `${L}/${updated.txId}/update`, 415, { key: A, body: 'v3', type: 'application/json' });
    await hit(b, 'POST', `${L}/${updated.txId}/update`, 401, { body: 'v3' });
    await hit(b, 'POST', `${L}/${updated.txId}/update`, 403, { key: f.keys.auditorA, body: 'v3' });
    await hit(b, 'POST', `${L}/${updated.txId}/update`, 422, {
      key: A,
      body: 'idem',
      headers: { 'idempotency-key': 'contract-1' },
    });

    // independent
    const independent = (await hit(b, 'POST', `${R}?encode=Base64`, 200, {
      key: f.keys.writerA2,
      body: 'an invoice',
    })) as { txId: string };
    await hit(b, 'POST', `${L}/${independent.txId}/update`, 400, { key: A, body: 'v3' });
    await hit(b, 'POST', R, 401, { body: 'x' });
    await hit(b, 'POST', R, 403, { key: f.keys.auditorA, body: 'x' });
    await hit(b, 'POST', R, 400, { key: A });
    await hit(b, 'POST', R, 413, { key: A, body: 'x'.repeat(2000) });
    await hit(b, 'POST', R, 415, { key: A, body: 'x', type: 'text/plain' });
    await hit(b, 'POST', R, 200, { key: A, body: 'r', headers: { 'idempotency-key': 'contract-r' } });
    await hit(b, 'POST', R, 422, { key: A, body: 'r2', headers: { 'idempotency-key': 'contract-r' } });

    // concurrent Idempotency-Key: a claim held by a request that never answers (409 after the bounded wait), on each write route
    const holder = new IdempotencyStore(f.redis, f.prefix, { claimTtlMs: 60_000 });
    const held = async (path: string, body: string | undefined, key: string) => {
      const fp = requestFingerprint({
        method: 'POST',
        originalUrl: path,
        body: body === undefined ? undefined : Buffer.from(body),
      } as never);
      await holder.claim('tenant-a', key, fp);
      await hit(b, 'POST', path, 409, {
        key: A,
        ...(body !== undefined ? { body } : {}),
        headers: { 'idempotency-key': key },
      });
    };
    await Promise.all([
      held(L, 'held', 'held-1'),
      held(R, 'held', 'held-2'),
      held(`${L}/${updated.txId}/update`, 'held', 'held-3'),
      held(`${L}/${updated.txId}/delete`, undefined, 'held-4'),
    ]);

    // confirmation: published, then mined
    await eventually(
      async () =>
        (await f.store.state(updated.txId)) === 'published' && (await f.store.state(independent.txId)) === 'published',
      15_000,
    );
    await f.produceBlock();
    // The other instances start after the publications above: composing an API on the fixture's
    // prefix since the ARC path merge makes the fixture's old-devnet publications fail.
    limited = await startApi({ prefix: f.prefix, env: { ...FUTURE, RATE_LIMIT_PER_KEY: '1/1' } });
    restricted = await startApi({ prefix: f.prefix, env: { FEATURES: 'unencoded', WEBHOOK_LIMIT: '3' } });

    // receipts: confirmed (200), not yet mined (409 with Retry-After), unknown, malformed, other family
    await hit(b, 'GET', `${L}/${updated.txId}/receipt`, 200, { key: f.keys.auditorA });
    await hit(b, 'GET', `${R}/${independent.txId}/receipt`, 200, { key: A });
    const pending = (await hit(b, 'POST', R, 200, { key: A, body: 'not mined yet' })) as { txId: string };
    const pendingLinked = (await hit(b, 'POST', L, 200, { key: A, body: 'not mined yet' })) as { txId: string };
    await hit(b, 'GET', `${R}/${pending.txId}/receipt`, 409, { key: A });
    await hit(b, 'GET', `${L}/${pendingLinked.txId}/receipt`, 409, { key: A });
    for (const [base, other] of [
      [L, independent.txId],
      [R, updated.txId],
    ] as const) {
      await hit(b, 'GET', `${base}/${unknown}/receipt`, 404, { key: A });
      await hit(b, 'GET', `${base}/nope/receipt`, 400, { key: A });
      await hit(b, 'GET', `${base}/${other}/receipt`, 400, { key: A });
      await hit(b, 'GET', `${base}/${other}/receipt`, 401, {});
    }

    // status
    const status = (await hit(b, 'GET', `${L}/${updated.txId}/status`, 200, { key: f.keys.auditorA })) as {
      confirmation: unknown;
    };
    expect(status.confirmation).not.toBeNull();
    await hit(b, 'GET', `${L}/${unknown}/status`, 404, { key: A });
    await hit(b, 'GET', `${L}/zzz/status`, 400, { key: A });
    await hit(b, 'GET', `${L}/${independent.txId}/status`, 400, { key: A });
    await hit(b, 'GET', `${L}/${updated.txId}/status`, 401, {});
    await hit(b, 'GET', `${R}/${independent.txId}/status`, 200, { key: A });
    await hit(b, 'GET', `${R}/${updated.txId}/status`, 400, { key: A });
    await hit(b, 'GET', `${R}/${unknown}/status`, 404, { key: A });
    await hit(b, 'GET', `${R}/${independent.txId}/status`, 401, {});

    // content
    for (const [base, tx, other] of [
      [L, updated.txId, independent.txId],
      [R, independent.txId, updated.txId],
    ] as const) {
      await hit(b, 'GET', `${base}/${tx}/content`, 200, { key: A });
      await hit(b, 'GET', `${base}/${tx}/content`, 304, { key: A, headers: { 'if-none-match': `"${tx}"` } });
      await hit(b, 'HEAD', `${base}/${tx}/content`, 200, { key: A });
      await hit(b, 'HEAD', `${base}/${tx}/content`, 304, { key: A, headers: { 'if-none-match': `"${tx}"` } });
      await hit(b, 'GET', `${base}/${unknown}/content`, 404, { key: A });
      await hit(b, 'HEAD', `${base}/${unknown}/content`, 404, { key: A });
      await hit(b, 'GET', `${base}/nope/content`, 400, { key: A });
      await hit(b, 'HEAD', `${base}/nope/content`, 400, { key: A });
      await hit(b, 'GET', `${base}/${other}/content`, 400, { key: A });
      await hit(b, 'GET', `${base}/${tx}/content`, 401, {});
      await hit(b, 'HEAD', `${base}/${tx}/content`, 401, {});
    }

    // match
    await hit(b, 'POST', `${L}/${updated.txId}/match?prevTxId=${created.txId}&encode=SHA256`, 200, {
      key: f.keys.auditorA,
      body: 'v2',
    });
    await hit(b, 'POST', `${L}/${updated.txId}/match`, 400, { key: A, body: 'v2' });
    await hit(b, 'POST', `${L}/${unknown}/match`, 404, { key: A, body: 'v2' });
    await hit(b, 'POST', `${L}/${updated.txId}/match`, 413, { key: A, body: 'x'.repeat(2000) });
    await hit(b, 'POST', `${L}/${updated.txId}/match`, 415, { key: A, body: 'v2', type: 'text/plain' });
    await hit(b, 'POST', `${L}/${updated.txId}/match`, 401, { body: 'v2' });
    await hit(b, 'POST', `${R}/${independent.txId}/match?encode=Base64`, 200, { key: A, body: 'an invoice' });
    await hit(b, 'POST', `${R}/${independent.txId}/match?encode=Bad`, 400, { key: A, body: 'an invoice' });
    await hit(b, 'POST', `${R}/${unknown}/match`, 404, { key: A, body: 'x' });
    await hit(b, 'POST', `${R}/${independent.txId}/match`, 413, { key: A, body: 'x'.repeat(2000) });
    await hit(b, 'POST', `${R}/${independent.txId}/match`, 415, { key: A, body: 'x', type: 'text/plain' });
    await hit(b, 'POST', `${R}/${independent.txId}/match`, 401, { body: 'x' });

    // navigate
    await hit(b, 'GET', `${L}/${created.txId}/navigate?links=3`, 200, { key: A });
    await hit(b, 'GET', `${L}/${created.txId}/navigate?links=0`, 400, { key: A });
    await hit(b, 'GET', `${L}/${unknown}/navigate?links=1`, 404, { key: A });
    await hit(b, 'GET', `${L}/${created.txId}/navigate?links=1`, 401, {});

    // delete
    await hit(b, 'POST', `${L}/${updated.txId}/delete`, 403, { key: f.keys.writerB });
    await hit(b, 'POST', `${L}/${updated.txId}/delete?updateToken=utk_wrong`, 400, { key: A });
    await hit(b, 'POST', `${L}/${unknown}/delete`, 404, { key: A });
    await hit(b, 'POST', `${L}/${updated.txId}/delete`, 401, {});
    await hit(b, 'POST', `${L}/${updated.txId}/delete`, 403, { key: f.keys.auditorA });
    await hit(b, 'POST', `${L}/${updated.txId}/delete`, 200, { key: A, headers: { 'idempotency-key': 'contract-d' } });
    await hit(b, 'POST', `${L}/${updated.txId}/delete`, 422, { key: A, headers: { 'idempotency-key': 'contract-1' } });
    await hit(b, 'POST', `${L}/${updated.txId}/delete`, 409, { key: A });

    // features switched off (FEATURES=unencoded): 403 FEATURE_NOT_ENABLED
    const r = restricted.baseUrl;
    await hit(r, 'POST', L, 403, { key: A, body: 'v1' });
    await hit(r, 'POST', `${L}/${created.txId}/update`, 403, { key: A, body: 'v1' });
    await hit(r, 'POST', `${L}/${created.txId}/delete`, 403, { key: A });
    await hit(r, 'GET', `${L}/${created.txId}/status`, 403, { key: A });
    await hit(r, 'GET', `${L}/${created.txId}/content`, 403, { key: A });
    await hit(r, 'HEAD', `${L}/${created.txId}/content`, 403, { key: A });
    await hit(r, 'GET', `${L}/${created.txId}/navigate?links=1`, 403, { key: A });
    await hit(r, 'POST', `${L}/${created.txId}/match`, 403, { key: A, body: 'v1' });
    await hit(r, 'POST', `${R}/${independent.txId}/match`, 403, { key: A, body: 'x' });
    await hit(r, 'GET', `${L}/${created.txId}/receipt`, 403, { key: A });
  }, 60_000);

  it('identity and legacy keys, claims, health, docs and the dashboard', async () => {
    const b = f.base;
    // A tenant of its own, so the key limit (5) leaves room for the creates below.
    const A = (await seedKey(f.api, { tenant: 'tenant-k', permissions: ['Issuer_Admin', 'Verifier_Admin'] })).rawKey;
    const K = '/api/v1/auth/identity-api-keys';
    const LK = '/api/v1/psp/product-manager/customer-user-api-keys';
    const J = 'application/json';
    const issuerOnly = await seedKey(f.api, { tenant: 'tenant-k', permissions: ['Issuer_Admin'] });
    const verifierAdmin = await seedKey(f.api, { tenant: 'tenant-k', permissions: ['Verifier_Admin'] });

    const made = (await hit(b, 'POST', K, 201, {
      key: A,
      body: JSON.stringify({ name: 'contract key', issuerPermission: 'Issuer_User' }),
      type: J,
    })) as { id: string };
    await hit(b, 'POST', K, 400, { key: A, body: JSON.stringify({ name: 'x' }), type: J });
    await hit(b, 'POST', K, 400, { key: A, body: '{"name":', type: J });
    await hit(b, 'POST', K, 415, { key: A, body: 'name=x', type: 'text/plain' });
    await hit(b, 'POST', K, 413, { key: A, body: JSON.stringify({ name: 'x'.repeat(20_000) }), type: J });
    await hit(b, 'POST', K, 403, {
      key: f.keys.writerA2,
      body: JSON.stringify({ name: 'nope', issuerPermission: 'Issuer_User' }),
      type: J,
    });
    await hit(b, 'POST', K, 403, {
      key: issuerOnly.rawKey,
      body: JSON.stringify({ name: 'escalate', verifierPermission: 'Verifier_Admin' }),
      type: J,
    });
    await hit(b, 'POST', K, 401, { body: '{}', type: J });
    await hit(b, 'GET', K, 200, { key: A });
    await hit(b, 'GET', K, 401, {});
    await hit(b, 'GET', K, 403, { key: f.keys.writerA2 });
    await hit(b, 'GET', `${K}/usage`, 200, { key: A });
    await hit(b, 'GET', `${K}/usage`, 401, {});
    await hit(b, 'GET', `${K}/usage`, 403, { key: f.keys.auditorA });
    await hit(b, 'POST', `${K}/${made.id}/revoke`, 201, { key: A, body: JSON.stringify({ isRevoked: true }), type: J });
    await hit(b, 'POST', `${K}/${made.id}/revoke`, 400, {
      key: A,
      body: JSON.stringify({ isRevoked: 'yes' }),
      type: J,
    });
    await hit(b, 'POST', `${K}/not-a-uuid/revoke`, 400, { key: A, body: JSON.stringify({ isRevoked: true }), type: J });
    await hit(b, 'POST', `${K}/${randomUUID()}/revoke`, 404, {
      key: A,
      body: JSON.stringify({ isRevoked: true }),
      type: J,
    });
    await hit(b, 'POST', `${K}/${made.id}/revoke`, 415, { key: A, body: 'x', type: 'text/plain' });
    await hit(b, 'POST', `${K}/${made.id}/revoke`, 413, {
      key: A,
      body: JSON.stringify({ isRevoked: true, pad: 'x'.repeat(20_000) }),
      type: J,
    });
    await hit(b, 'POST', `${K}/${verifierAdmin.id}/revoke`, 403, {
      key: issuerOnly.rawKey,
      body: JSON.stringify({ isRevoked: true }),
      type: J,
    });
    await hit(b, 'POST', `${K}/${made.id}/revoke`, 401, { body: '{}', type: J });
    await hit(b, 'DELETE', `${K}/${verifierAdmin.id}`, 403, { key: issuerOnly.rawKey });
    await hit(b, 'DELETE', `${K}/not-a-uuid`, 400, { key: A });
    await hit(b, 'DELETE', `${K}/${randomUUID()}`, 404, { key: A });
    await hit(b, 'DELETE', `${K}/${made.id}`, 401, {});
    await hit(b, 'DELETE', `${K}/${made.id}`, 204, { key: A });

    // the key limit (KEY_LIMIT 5) in a tenant of its own
    const admin = await seedKey(f.api, { tenant: 'tenant-limit', permissions: ['Issuer_Admin', 'Verifier_Admin'] });
    for (let i = 0; i < 4; i++)
      await hit(b, 'POST', K, 201, {
        key: admin.rawKey,
        body: JSON.stringify({ name: `key ${i}`, issuerPermission: 'Issuer_User' }),
        type: J,
      });
    await hit(b, 'POST', K, 403, {
      key: admin.rawKey,
      body: JSON.stringify({ name: 'one too many', issuerPermission: 'Issuer_User' }),
      type: J,
    });
    await hit(b, 'POST', LK, 403, { key: admin.rawKey, body: JSON.stringify({ name: 'one too many' }), type: J });

    // legacy
    await hit(b, 'POST', LK, 201, { key: A, body: JSON.stringify({ name: 'legacy made' }), type: J });
    const { redis, config, clock } = f.api.deps;
    await importLegacyKeys(
      { redis, config, clock },
      [
        {
          id: 101,
          name: 'legacy one',
          status: 'Active',
          createdAt: clock.now().toISOString(),
          rawKey: 'legacy-contract-key-0001',
        },
        {
          id: 102,
          name: 'legacy two',
          status: 'Active',
          createdAt: clock.now().toISOString(),
          rawKey: 'legacy-contract-key-0002',
        },
      ],
      { tenant: 'tenant-k' },
    );
    await hit(b, 'GET', LK, 200, { key: A });
    await hit(b, 'GET', LK, 401, {});
    await hit(b, 'GET', LK, 403, { key: f.keys.writerA2 });
    await hit(b, 'GET', `${LK}/usage`, 200, { key: A });
    await hit(b, 'GET', `${LK}/usage`, 401, {});
    await hit(b, 'GET', `${LK}/usage`, 403, { key: f.keys.writerA2 });
    await hit(b, 'POST', LK, 400, { key: A, body: JSON.stringify({ name: 'x' }), type: J });
    await hit(b, 'POST', LK, 415, { key: A, body: 'x', type: 'text/plain' });
    await hit(b, 'POST', LK, 413, { key: A, body: JSON.stringify({ name: 'x'.repeat(20_000) }), type: J });
    await hit(b, 'POST', LK, 401, { body: '{}', type: J });
    await hit(b, 'POST', LK, 403, { key: f.keys.writerA2, body: JSON.stringify({ name: 'legacy made' }), type: J });
    await hit(b, 'PATCH', `${LK}/101`, 200, { key: A, body: JSON.stringify({ status: 'Disabled' }), type: J });
    await hit(b, 'PATCH', `${LK}/101`, 400, { key: A, body: JSON.stringify({ status: 'Paused' }), type: J });
    await hit(b, 'PATCH', `${LK}/${randomUUID()}`, 400, {
      key: A,
      body: JSON.stringify({ status: 'Disabled' }),
      type: J,
    });
    await hit(b, 'PATCH', `${LK}/999`, 404, { key: A, body: JSON.stringify({ status: 'Disabled' }), type: J });
    await hit(b, 'PATCH', `${LK}/101`, 415, { key: A, body: 'x', type: 'text/plain' });
    await hit(b, 'PATCH', `${LK}/101`, 413, { key: A, body: JSON.stringify({ status: 'x'.repeat(20_000) }), type: J });
    await hit(b, 'PATCH', `${LK}/101`, 401, { body: '{}', type: J });
    await hit(b, 'PATCH', `${LK}/101`, 403, {
      key: f.keys.writerA2,
      body: JSON.stringify({ status: 'Active' }),
      type: J,
    });
    await hit(b, 'DELETE', `${LK}/abc`, 400, { key: A });
    await hit(b, 'DELETE', `${LK}/999`, 404, { key: A });
    await hit(b, 'DELETE', `${LK}/102`, 401, {});
    await hit(b, 'DELETE', `${LK}/102`, 403, { key: f.keys.writerA2 });
    await hit(b, 'DELETE', `${LK}/102`, 204, { key: A });
    // after the sunset (the default, already past): 410 with the deprecation headers
    const r = restricted.baseUrl;
    await hit(r, 'GET', LK, 410, { key: A });
    await hit(r, 'GET', `${LK}/usage`, 410, { key: A });
    await hit(r, 'POST', LK, 410, { key: A, body: '{}', type: J });
    await hit(r, 'PATCH', `${LK}/101`, 410, { key: A, body: '{}', type: J });
    await hit(r, 'DELETE', `${LK}/101`, 410, { key: A });

    // webhooks (WEBHOOK_ALLOW_PRIVATE=true on the fixture: a loopback receiver is allowed there)
    const W = '/api/v1/webhooks';
    const hookBody = (url: string) => JSON.stringify({ url, events: ['record.confirmed'] });
    const hook = (await hit(b, 'POST', W, 201, { key: A, body: hookBody('http://127.0.0.1:9/hook'), type: J })) as {
      id: string;
    };
    await hit(b, 'POST', W, 400, {
      key: A,
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['record.minted'] }),
      type: J,
    });
    await hit(b, 'POST', W, 400, { key: A, body: hookBody('ftp://127.0.0.1/hook'), type: J });
    await hit(b, 'POST', W, 400, { key: A, body: '{"url":', type: J });
    await hit(b, 'POST', W, 415, { key: A, body: 'x', type: 'text/plain' });
    await hit(b, 'POST', W, 413, { key: A, body: hookBody('http://127.0.0.1:9/' + 'x'.repeat(20_000)), type: J });
    await hit(b, 'POST', W, 401, { body: hookBody('http://127.0.0.1:9/hook'), type: J });
    await hit(b, 'POST', W, 403, { key: verifierAdmin.rawKey, body: hookBody('http://127.0.0.1:9/hook'), type: J });
    await hit(restricted.baseUrl, 'POST', W, 400, { key: A, body: hookBody('http://127.0.0.1:9/hook'), type: J });
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${b}${W}`, {
        method: 'POST',
        headers: { 'x-api-key': A, 'content-type': J },
        body: hookBody(`http://127.0.0.1:9/h${i}`),
      });
      await res.arrayBuffer();
      if (res.status === 409) break;
    }
    await hit(b, 'POST', W, 409, { key: A, body: hookBody('http://127.0.0.1:9/one-more'), type: J });
    await hit(b, 'GET', W, 200, { key: A });
    await hit(b, 'GET', W, 401);
    await hit(b, 'GET', W, 403, { key: verifierAdmin.rawKey });
    await hit(b, 'GET', `${W}/${hook.id}/deliveries`, 200, { key: A });
    await hit(b, 'GET', `${W}/nope/deliveries`, 400, { key: A });
    await hit(b, 'GET', `${W}/${randomUUID()}/deliveries`, 404, { key: A });
    await hit(b, 'GET', `${W}/${hook.id}/deliveries`, 401);
    await hit(b, 'GET', `${W}/${hook.id}/deliveries`, 403, { key: verifierAdmin.rawKey });
    await hit(b, 'DELETE', `${W}/nope`, 400, { key: A });
    await hit(b, 'DELETE', `${W}/${randomUUID()}`, 404, { key: A });
    await hit(b, 'DELETE', `${W}/${hook.id}`, 401);
    await hit(b, 'DELETE', `${W}/${hook.id}`, 403, { key: verifierAdmin.rawKey });
    await hit(b, 'DELETE', `${W}/${hook.id}`, 204, { key: A });

    // claims
    await hit(b, 'GET', '/auth/granted-claims', 200);
    await hit(b, 'GET', '/api/v1/auth/granted-claims', 200);
    await hit(b, 'GET', '/auth/granted-claims', 401, { headers: { authorization: 'Bearer not.a.token' } });
    await hit(b, 'GET', '/api/v1/auth/granted-claims', 401, { headers: { authorization: 'Bearer not.a.token' } });

    // health and docs
    await hit(b, 'GET', '/liveness', 200);
    await f.redis.zadd(sharedKeys(f.prefix).workerHeartbeats, Date.now() + 60_000, 'contract-worker');
    await hit(b, 'GET', '/readiness', 200);
    await hit(b, 'GET', '/metrics', 200);
    await hit(b, 'GET', '/api/v1/docs', 200);
    await hit(b, 'GET', '/', 200);
    await hit(b, 'GET', '/verify', 200);
    const served = await hit(b, 'GET', '/api/v1/openapi.json', 200);
    expect(served).toEqual(openApiDocument());

    // the dashboard
    const basic = (k: string) => ({ authorization: `Basic ${Buffer.from(`u:${k}`).toString('base64')}` });
    await hit(b, 'GET', '/admin/queues', 200, { headers: basic(A) });
    await hit(b, 'GET', '/admin/queues', 401);
    await hit(b, 'GET', '/admin/queues', 403, { key: f.keys.writerA2 });
  }, 60_000);

  it('429 RATE_LIMITED on every keyed operation (RATE_LIMIT_PER_KEY=1/1 on an instance sharing the store)', async () => {
    const keyed = Object.entries(paths).flatMap(([template, item]) =>
      Object.entries(item)
        .filter(([, op]) => JSON.stringify(op.security).includes('ApiKey'))
        .map(([method]) => ({ template, method: method.toUpperCase() })),
    );
    expect(keyed.length).toBeGreaterThan(20);
    const tx = 'e'.repeat(64);
    for (const { template, method } of keyed) {
      const key = await seedKey(limited, { tenant: 'tenant-rl', permissions: ['Issuer_Admin', 'Verifier_Admin'] });
      const path = template.replace('{txId}', tx).replace('{id}', randomUUID()).replace('{apiKeyId}', '101');
      const first = await fetch(`${limited.baseUrl}${path}`, { method, headers: { 'x-api-key': key.rawKey } });
      await first.arrayBuffer();
      expect(`${method} ${path} ${first.status}`).not.toMatch(/ 429$/);
      await hit(limited.baseUrl, method, path, 429, { key: key.rawKey });
    }
  }, 60_000);

  it('every documented response is provoked above or has a stated reason', () => {
    const missing: string[] = [];
    for (const [template, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const status of Object.keys(op.responses)) {
          const id = `${method.toUpperCase()} ${template} ${status}`;
          if (!provoked.has(id) && !notProvokedBecause(method.toUpperCase(), template, status)) missing.push(id);
        }
      }
    }
    expect(missing.sort()).toEqual([]);
    expect(provoked.size).toBeGreaterThan(150);
  });
});
