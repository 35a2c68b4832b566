import { KEYS, startRecordsFixture } from '../testing/records-fixture';
import type { KeyRole, RecordsFixture } from '../testing/records-fixture';

const LR = '/api/v1/linkedrecords';
const R = '/api/v1/records';
const UNKNOWN = 'ab'.repeat(32);
const OTHER_TOKEN = `utk_${'A'.repeat(43)}`;

type Case = [
  label: string,
  method: string,
  path: () => string,
  opts: { key?: KeyRole | null; body?: string | Buffer; type?: string | null },
  status: number,
  code: string,
];

describe('record endpoints refuse bad input with problem+json and write nothing', () => {
  let f: RecordsFixture;
  let linked: { txId: string; updateToken: string };
  let updated: { txId: string; updateToken: string };
  let independent: { txId: string };

  beforeAll(async () => {
    f = await startRecordsFixture();
    linked = (await (await f.request('POST', `${LR}?encode=SHA256`, { body: 'root' })).json()) as typeof linked;
    updated = (await (
      await f.request('POST', `${LR}/${linked.txId}/update?updateToken=${linked.updateToken}`, { body: 'next' })
    ).json()) as typeof updated;
    independent = (await (await f.request('POST', R, { body: 'alone' })).json()) as typeof independent;
    expect(linked.txId && updated.txId && independent.txId).toBeTruthy();
    // A write answers before its publication job is added: let the jobs land before the snapshots.
    await f.queue.idle();
  });
  afterAll(async () => {
    await f.close();
  });

  const cases: Case[] = [
    ['malformed txId', 'GET', () => `${LR}/xyz/status`, {}, 400, 'TX_ID_PARAM_INVALID'],
    ['63-hex txId', 'GET', () => `${R}/${'a'.repeat(63)}/content`, {}, 400, 'TX_ID_PARAM_INVALID'],
    ['undecodable txId', 'GET', () => `${LR}/%ZZ/status`, {}, 400, 'BAD_REQUEST'],
    ['unknown txId', 'GET', () => `${LR}/${UNKNOWN}/status`, {}, 404, 'TX_NOT_FOUND'],
    ['unknown txId content', 'HEAD', () => `${R}/${UNKNOWN}/content`, {}, 404, ''],
    [
      'independent id on linked status',
      'GET',
      () => `${LR}/${independent.txId}/status`,
      {},
      400,
      'TX_INCORRECT_EVENT_TRANSACTION_TYPE',
    ],
    [
      'linked id on records content',
      'GET',
      () => `${R}/${linked.txId}/content`,
      {},
      400,
      'TX_INCORRECT_EVENT_TRANSACTION_TYPE',
    ],
    [
      'linked id on records match',
      'POST',
      () => `${R}/${linked.txId}/match`,
      { body: 'root' },
      400,
      'TX_INCORRECT_EVENT_TRANSACTION_TYPE',
    ],
    [
      'independent id navigated',
      'GET',
      () => `${LR}/${independent.txId}/navigate?links=1`,
      {},
      400,
      'INVALID_NAVIGATION_TRANSACTION_TYPE',
    ],
    ['links 0', 'GET', () => `${LR}/${linked.txId}/navigate?links=0`, {}, 400, 'LINKS_PARAM_INVALID'],
    ['links 1.5', 'GET', () => `${LR}/${linked.txId}/navigate?links=1.5`, {}, 400, 'LINKS_PARAM_INVALID'],
    ['links abc', 'GET', () => `${LR}/${linked.txId}/navigate?links=abc`, {}, 400, 'LINKS_PARAM_INVALID'],
    ['links beyond max', 'GET', () => `${LR}/${linked.txId}/navigate?links=6`, {}, 400, 'LINKS_PARAM_INVALID'],
    ['links beyond -max', 'GET', () => `${LR}/${linked.txId}/navigate?links=-6`, {}, 400, 'LINKS_PARAM_INVALID'],
    ['links missing', 'GET', () => `${LR}/${linked.txId}/navigate`, {}, 400, 'LINKS_PARAM_INVALID'],
    ['links repeated', 'GET', () => `${LR}/${linked.txId}/navigate?links=1&links=2`, {}, 400, 'LINKS_PARAM_INVALID'],
    ['unbalanced encode', 'POST', () => `${LR}?encode=SHA256(abc`, { body: 'x' }, 400, 'ENCODE_PARAM_INVALID'],
    ['empty encode segment', 'POST', () => `${R}?encode=SHA256||Base64`, { body: 'x' }, 400, 'ENCODE_PARAM_INVALID'],
    ['unescaped + in salt', 'POST', () => `${LR}?encode=SHA256(a+b)`, { body: 'x' }, 400, 'ENCODE_PARAM_INVALID'],
    ['forbidden salt char', 'POST', () => `${LR}?encode=SHA256(a%2Ab)`, { body: 'x' }, 400, 'ENCODE_PARAM_INVALID'],
    ['repeated encode', 'POST', () => `${LR}?encode=SHA256&encode=Base64`, { body: 'x' }, 400, 'ENCODE_PARAM_INVALID'],
    ['unknown encoder', 'POST', () => `${R}?encode=MD5`, { body: 'x' }, 400, 'UNKNOWN_ENCODER'],
    [
      'unknown encoder on update',
      'POST',
      () => `${LR}/${updated.txId}/update?encode=ROT13`,
      { body: 'x' },
      400,
      'UNKNOWN_ENCODER',
    ],
    ['empty body create', 'POST', () => LR, {}, 400, 'CONTENT_IS_REQUIRED'],
    ['empty body write', 'POST', () => R, { body: '' }, 400, 'CONTENT_IS_REQUIRED'],
    ['empty body update', 'POST', () => `${LR}/${updated.txId}/update`, {}, 400, 'CONTENT_IS_REQUIRED'],
    ['empty body match', 'POST', () => `${R}/${independent.txId}/match`, {}, 400, 'CONTENT_IS_REQUIRED'],
    ['oversize body', 'POST', () => LR, { body: Buffer.alloc(1025, 1) }, 413, 'CONTENT_LENGTH_LIMIT_EXCEEDED'],
    ['oversize write', 'POST', () => R, { body: Buffer.alloc(4096, 1) }, 413, 'CONTENT_LENGTH_LIMIT_EXCEEDED'],
    ['text/plain body', 'POST', () => LR, { body: 'x', type: 'text/plain' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['json body', 'POST', () => R, { body: '{}', type: 'application/json' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    [
      'form body on update',
      'POST',
      () => `${LR}/${updated.txId}/update`,
      { body: 'a=b', type: 'application/x-www-form-urlencoded' },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'wrong updateToken',
      'POST',
      () => `${LR}/${updated.txId}/update?updateToken=${OTHER_TOKEN}`,
      { body: 'x' },
      400,
      'UPDATE_TOKEN_PARAM_INVALID',
    ],
    [
      'stale updateToken (of the previous record)',
      'POST',
      () => `${LR}/${updated.txId}/update?updateToken=${linked.updateToken}`,
      { body: 'x' },
      400,
      'UPDATE_TOKEN_PARAM_INVALID',
    ],
    [
      'malformed updateToken',
      'POST',
      () => `${LR}/${updated.txId}/delete?updateToken=nope`,
      {},
      400,
      'UPDATE_TOKEN_PARAM_INVALID',
    ],
    [
      'wrong updateToken on delete',
      'POST',
      () => `${LR}/${updated.txId}/delete?updateToken=${OTHER_TOKEN}`,
      {},
      400,
      'UPDATE_TOKEN_PARAM_INVALID',
    ],
    [
      'other tenant without token',
      'POST',
      () => `${LR}/${updated.txId}/update`,
      { body: 'x', key: KEYS.writerB },
      403,
      'FORBIDDEN',
    ],
    [
      'other tenant delete without token',
      'POST',
      () => `${LR}/${updated.txId}/delete`,
      { key: KEYS.writerB },
      403,
      'FORBIDDEN',
    ],
    [
      'update of a record that is not the end',
      'POST',
      () => `${LR}/${linked.txId}/update`,
      { body: 'x' },
      409,
      'NOT_LINKED_RECORDS_END',
    ],
    [
      'delete of a record that is not the end',
      'POST',
      () => `${LR}/${linked.txId}/delete`,
      {},
      409,
      'NOT_LINKED_RECORDS_END',
    ],
    [
      'update of an independent record',
      'POST',
      () => `${LR}/${independent.txId}/update`,
      { body: 'x' },
      400,
      'TX_INCORRECT_EVENT_TRANSACTION_TYPE',
    ],
    ['update of an unknown record', 'POST', () => `${LR}/${UNKNOWN}/update`, { body: 'x' }, 404, 'TX_NOT_FOUND'],
    ['delete with malformed txId', 'POST', () => `${LR}/123/delete`, {}, 400, 'TX_ID_PARAM_INVALID'],
    [
      'match: malformed prevTxId',
      'POST',
      () => `${LR}/${updated.txId}/match?prevTxId=123`,
      { body: 'next' },
      400,
      'TX_ID_PARAM_INVALID',
    ],
    [
      'match: prevTxId missing for an update',
      'POST',
      () => `${LR}/${updated.txId}/match`,
      { body: 'next' },
      400,
      'PREV_TX_ID_PARAM_MISSING',
    ],
    ['no key', 'POST', () => LR, { body: 'x', key: null }, 401, 'API_KEY_MISSING'],
    ['read-only key writes', 'POST', () => R, { body: 'x', key: KEYS.auditorA }, 403, 'PERMISSION_DENIED'],
    [
      'read-only key updates',
      'POST',
      () => `${LR}/${updated.txId}/update?updateToken=${updated.updateToken}`,
      { body: 'x', key: KEYS.auditorA },
      403,
      'PERMISSION_DENIED',
    ],
  ];

  it.each(cases)('%s -> %i %s', async (_label, method, path, opts, status, code) => {
    const before = await snapshot(f);
    const res = await f.request(method, path(), opts);
    expect(res.status).toBe(status);
    if (method !== 'HEAD') {
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const problem = (await res.json()) as {
        status: number;
        errorCode: string;
        detail: string;
        title: string;
        type: string;
      };
      expect(problem).toMatchObject({ status, errorCode: code });
      expect(problem.detail.length).toBeGreaterThan(0);
    }
    expect(await snapshot(f)).toEqual(before);
  });

  it('a prevTxId that is not the previous record is a plain mismatch, not an error', async () => {
    const res = await f.request('POST', `${LR}/${updated.txId}/match?prevTxId=${UNKNOWN}`, {
      body: 'next',
      key: KEYS.auditorA,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ match: false, confirmation: null });
    const ok = await f.request('POST', `${LR}/${updated.txId}/match?prevTxId=${linked.txId}`, {
      body: 'next',
      key: KEYS.auditorA,
    });
    expect(await ok.json()).toEqual({ match: true, confirmation: null });
  });
});

describe('features switched off', () => {
  it('FEATURES=linked: match and navigate need an upgrade; unencoded records are refused', async () => {
    const f = await startRecordsFixture({ FEATURES: 'linked' });
    try {
      const unencoded = await f.request('POST', LR, { body: 'x' });
      expect(unencoded.status).toBe(400);
      expect(((await unencoded.json()) as { errorCode: string }).errorCode).toBe('ENCODER_SHA256_MISSING');
      const created = (await (await f.request('POST', `${LR}?encode=SHA256`, { body: 'x' })).json()) as {
        txId: string;
      };
      for (const [method, path] of [
        ['POST', `${LR}/${created.txId}/match`],
        ['GET', `${LR}/${created.txId}/navigate?links=1`],
      ] as const) {
        const res = await f.request(method, path, method === 'POST' ? { body: 'x' } : {});
        expect(res.status).toBe(403);
        const problem = (await res.json()) as { errorCode: string; detail: string };
        expect(problem.errorCode).toBe('FEATURE_NOT_ENABLED');
        expect(problem.detail).toMatch(/upgrade/);
      }
    } finally {
      await f.close();
    }
  });

  it('FEATURES=verify: linked records need an upgrade; independent records still work', async () => {
    const f = await startRecordsFixture({ FEATURES: 'verify,unencoded' });
    try {
      const res = await f.request('POST', LR, { body: 'x' });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { errorCode: string }).errorCode).toBe('FEATURE_NOT_ENABLED');
      expect(await f.recordKeys()).toEqual([]);
      expect((await f.request('POST', R, { body: 'x' })).status).toBe(200);
    } finally {
      await f.close();
    }
  });
});

/** Every record key with its full content, the devnet's keys and the BullMQ job count. */
async function snapshot(f: RecordsFixture): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of await f.recordKeys()) {
    const type = await f.redis.type(key);
    if (type === 'hash') out[key] = await f.redis.hgetall(key);
    else if (type === 'list') out[key] = await f.redis.lrange(key, 0, -1);
    else if (type === 'zset') out[key] = await f.redis.zrange(key, 0, -1);
    else out[key] = type;
  }
  out['chain'] = await f.chainKeys();
  out['jobs'] = await f.queue.queue.count();
  return out;
}
