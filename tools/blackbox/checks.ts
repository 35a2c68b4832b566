/**
 * The black-box check of a running deployment: every part of the specification a user meets,
 * over HTTP only (REST, GraphQL, the headers source), with nothing of the service's code. It
 * writes records (they stay on chain), creates keys and deletes them again.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Transaction, Utils } from '@bsv/sdk';
import type { MerklePath } from '@bsv/sdk';
import { SignJWT } from 'jose';
import { CheckFailed, CheckSkipped, Http, check, errorCodeOf, expectProblem, expectStatus, same, until } from './http';
import type { Answer } from './http';
import { headersTracker, verifyConfirmation } from './proof';
import type { Confirmation } from './proof';

export interface BlackboxOptions {
  /** REST base URL, e.g. http://127.0.0.1:3000. */
  url: string;
  /** GraphQL base URL (with or without /graphql). */
  graphql: string;
  /** A WhatsOnChain-compatible headers source (the deployment's HEADERS_URL). */
  headers: string;
  /** A key with Issuer_Admin and Verifier_Admin. */
  key: string;
  /** The deployment's AUTH_JWT_SECRET; the signed-token cases are skipped without it. */
  jwtSecret?: string | undefined;
  jwtIssuer?: string | undefined;
  jwtAudience?: string | undefined;
  /** The deployment's AUTH_CLAIMS_FIELD (default cognito:groups). */
  claimsField?: string | undefined;
  /** How long every record may take to carry a proof. */
  proofTimeoutMs: number;
  /** How long a call answered 503/429 "retry" is sent again; readiness waits as long. */
  waitMs: number;
  /** The per-tenant key limit is checked only when at most this many keys are free. */
  maxLimitKeys: number;
}

export interface CheckResult {
  name: string;
  outcome: 'ok' | 'failed' | 'skipped';
  ms: number;
  detail?: string;
}

const V1 = '/api/v1';
const IDENTITY = `${V1}/auth/identity-api-keys`;
const LEGACY = `${V1}/psp/product-manager/customer-user-api-keys`;
const sha256 = (b: Buffer): Buffer => createHash('sha256').update(b).digest();
const TX_ID = /^[0-9a-f]{64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Written {
  txId: string;
  family: 'records' | 'linkedrecords';
  /** The bytes on chain. */
  onChain: Buffer;
  contentType: string;
  /** Linked records: the record this one updates or deletes (null for a create). */
  prevTxId?: string | null;
}

interface KeyJson {
  id: string;
  name: string;
  keyMask: string;
  permissions: string[];
  expiresAt: string;
  revokedAt: string | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  rawKey?: string;
}

interface ConfirmationUpdate {
  txId: string;
  publication: string;
  confirmedBlocks: number;
  reached: boolean;
  confirmation: { blockHash: string } | null;
}

interface Receipt {
  txId: string;
  family: string;
  rawTx: string;
  merkleProof: Confirmation['merkleProof'];
  blockHeader: string;
  blockHash: string;
  blockHeight: number;
  beef: string;
  prevTxId?: string | null;
}

/** What the checks learn and later checks build on. */
interface State {
  written: Written[];
  /** Independent records by what they show. */
  independent: Record<'sha' | 'base64' | 'salted' | 'chained', string | undefined>;
  /** The linked chain: create, update, delete. */
  chain: { create?: string; update?: string; del?: string };
  confirmations: Map<string, Confirmation>;
  blockHeights: Map<string, number>;
}

export async function runBlackbox(
  o: BlackboxOptions,
  report: (r: CheckResult) => void = () => undefined,
): Promise<{ results: CheckResult[]; retries: Record<string, number> }> {
  const http = new Http(o.waitMs);
  const api = o.url.replace(/\/$/, '');
  const gqlUrl = /\/graphql$/.test(o.graphql) ? o.graphql : `${o.graphql.replace(/\/$/, '')}/graphql`;
  const headersUrl = o.headers.replace(/\/$/, '');
  const run = randomBytes(4).toString('hex');
  const s: State = {
    written: [],
    independent: { sha: undefined, base64: undefined, salted: undefined, chained: undefined },
    chain: {},
    confirmations: new Map(),
    blockHeights: new Map(),
  };
  const results: CheckResult[] = [];
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new CheckSkipped(`needs ${what}`);
    return value;
  };
  const rest = (method: string, path: string, options: Parameters<Http['call']>[2] = {}) =>
    http.call(method, `${api}${path}`, { key: o.key, ...options });

  const step = async (name: string, body: () => Promise<void>) => {
    const started = Date.now();
    let result: CheckResult;
    try {
      await body();
      result = { name, outcome: 'ok', ms: Date.now() - started };
    } catch (e) {
      const outcome = e instanceof CheckSkipped ? 'skipped' : 'failed';
      const detail =
        e instanceof CheckFailed || e instanceof CheckSkipped ? e.message : `${(e as Error).stack ?? String(e)}`;
      result = { name, outcome, ms: Date.now() - started, detail };
    }
    results.push(result);
    report(result);
  };

  /** A record write (independent, linked create or update): 200, the txId, the encoding entries. */
  const write = async (path: string, content: Buffer, expected: { contentType: string; output: string }[]) => {
    const res = await rest('POST', path, { body: content });
    const body = expectStatus<{ txId: string; encoding: unknown; updateToken?: string }>(res, 200, `POST ${path}`);
    check(TX_ID.test(body.txId), `POST ${path}: txId ${body.txId}`);
    same(body.encoding, expected, `POST ${path}: encoding`);
    return body;
  };
  const status = async (family: string, txId: string) =>
    expectStatus<{ confirmation: Confirmation | null; updatable?: boolean }>(
      await rest('GET', `${V1}/${family}/${txId}/status`),
      200,
      `GET ${family}/${txId}/status`,
    );
  const content = async (w: Written) => {
    const get = await rest('GET', `${V1}/${w.family}/${w.txId}/content`);
    expectStatus(get, 200, `GET content of ${w.txId}`);
    check(get.bytes.equals(w.onChain), `GET content of ${w.txId}: not the bytes written`);
    const head = await rest('HEAD', `${V1}/${w.family}/${w.txId}/content`);
    expectStatus(head, 200, `HEAD content of ${w.txId}`);
    check(head.bytes.length === 0, `HEAD content of ${w.txId}: a body came`);
    for (const a of [get, head])
      same(
        {
          type: a.headers.get('content-type'),
          length: a.headers.get('content-length'),
          etag: a.headers.get('etag'),
        },
        { type: w.contentType, length: String(w.onChain.length), etag: `"${w.txId}"` },
        `${a === get ? 'GET' : 'HEAD'} content headers of ${w.txId}`,
      );
  };
  const match = async (family: string, txId: string, query: string, body?: Buffer) => {
    const res = await rest('POST', `${V1}/${family}/${txId}/match${query}`, body ? { body } : {});
    return res;
  };
  const matches = async (family: string, txId: string, query: string, body: Buffer | undefined, expected: boolean) => {
    const res = await match(family, txId, query, body);
    const json = expectStatus<{ match: boolean; confirmation: unknown }>(res, 200, `match ${txId}${query}`);
    same(json.match, expected, `match ${txId}${query}`);
    check('confirmation' in json, `match ${txId}${query}: no confirmation field`);
  };
  /** A GraphQL request; `key` null sends none. */
  const gql = async (query: string, variables: Record<string, unknown> = {}, key: string | null = o.key) => {
    const res = await http.call('POST', gqlUrl, { key: key ?? undefined, body: { query, variables } });
    return expectStatus<{
      data?: Record<string, unknown>;
      errors?: { message: string; extensions?: { code?: string } }[];
    }>(res, 200, 'GraphQL');
  };
  const gqlData = async (query: string, variables: Record<string, unknown> = {}) => {
    const body = await gql(query, variables);
    check(!body.errors, `GraphQL errors: ${JSON.stringify(body.errors)}`);
    return body.data as Record<string, unknown>;
  };
  const createKey = async (body: Record<string, string>, key = o.key) =>
    expectStatus<KeyJson>(await rest('POST', IDENTITY, { key, body }), 201, `create key ${body['name']}`);
  const usage = async () =>
    expectStatus<{ used: number; limit: number }>(await rest('GET', `${IDENTITY}/usage`), 200, 'GET usage');
  /**
   * `confirmation(txId, depth: 1)` over SSE (GraphQL over HTTP, `accept: text/event-stream`): every
   * `next` event's data until the stream ends (after `reached`) or the proof timeout.
   */
  const subscribe = async (txId: string): Promise<ConfirmationUpdate[]> => {
    const res = await fetch(gqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': o.key },
      body: JSON.stringify({
        query:
          'subscription($t: String!) { confirmation(txId: $t, depth: 1) { txId publication confirmedBlocks reached confirmation { blockHash } } }',
        variables: { t: txId },
      }),
      signal: AbortSignal.timeout(o.proofTimeoutMs),
    });
    check(res.status === 200, `subscription: HTTP ${res.status}`);
    check(
      (res.headers.get('content-type') ?? '').startsWith('text/event-stream'),
      `subscription: content type ${res.headers.get('content-type')}`,
    );
    const events: ConfirmationUpdate[] = [];
    for (const block of (await res.text()).split('\n\n')) {
      const lines = block.split('\n');
      if (!lines.includes('event: next')) continue;
      const data = lines.find((l) => l.startsWith('data: '));
      const payload = JSON.parse(data?.slice(6) ?? '{}') as {
        data?: { confirmation: ConfirmationUpdate };
        errors?: unknown;
      };
      check(payload.data && !payload.errors, `subscription: ${data}`);
      events.push(payload.data.confirmation);
    }
    return events;
  };
  /** Keys this run created and has not deleted yet: deleted at the end whatever happened. */
  const created = new Set<string>();
  const deleteKey = async (id: string) => {
    const res = await rest('DELETE', `${IDENTITY}/${id}`);
    expectStatus(res, 204, `DELETE key ${id}`);
    created.delete(id);
  };
  /** An answer of a request made with `key` to a route any valid key may read. */
  const authenticates = async (key: string) => await rest('GET', `${V1}/records/${'ab'.repeat(32)}/status`, { key });

  await step('the deployment is ready (REST and GraphQL readiness, GraphQL health)', async () => {
    // A deployment just started may not listen yet: a refused connection is "not ready".
    const answers = (url: string) =>
      fetch(url).then(
        (res) => res.status === 200 || undefined,
        () => undefined,
      );
    await until(() => answers(`${api}/readiness`), o.waitMs, 'REST /readiness never answered 200');
    await until(
      () => answers(gqlUrl.replace(/\/graphql$/, '/readiness')),
      o.waitMs,
      'GraphQL /readiness never answered 200',
    );
    const health = await gql('{ health version }', {}, null);
    same(health.data?.['health'], 'ok', 'GraphQL health');
  });

  await step('independent records: SHA256, Base64, a salt, a chain of encoders', async () => {
    const text = Buffer.from(`blackbox ${run} independent`);
    /** An `encoding[]` entry as the service must report it: binary steps in hex, text as is. */
    const binary = (encoders: string, bytes: Buffer) => ({
      contentType: `application/octet-stream; event-encoded=${encoders}`,
      output: bytes.toString('hex'),
    });
    const textual = (encoders: string, bytes: Buffer) => ({
      contentType: `text/plain; event-encoded=${encoders}`,
      output: bytes.toString('base64'),
    });
    const digest = sha256(text);
    // A salt with every allowed kind of character; `+` travels as %2B.
    const salt = `Salt/${run}:x-y+z`;
    const salted = sha256(Buffer.concat([Buffer.from(salt), text]));
    // SHA256 with a salt, then Base64 of the digest's bytes.
    const peppered = sha256(Buffer.concat([Buffer.from('pepper'), text]));
    const cases: [keyof State['independent'], string, { contentType: string; output: string }[], Buffer][] = [
      ['sha', 'SHA256', [binary('SHA256', digest)], digest],
      ['base64', 'Base64', [textual('Base64', text)], Buffer.from(text.toString('base64'))],
      ['salted', `SHA256(${salt.replace('+', '%2B')})`, [binary('SHA256', salted)], salted],
      [
        'chained',
        'SHA256(pepper)|Base64',
        [binary('SHA256', peppered), textual('SHA256|Base64', peppered)],
        Buffer.from(peppered.toString('base64')),
      ],
    ];
    for (const [name, encode, encoding, onChain] of cases) {
      const written = await write(`${V1}/records?encode=${encode}`, text, encoding);
      check(!('updateToken' in written), `an independent write (${encode}) returned an updateToken`);
      s.independent[name] = written.txId;
      const contentType = encoding[encoding.length - 1]?.contentType ?? 'application/octet-stream';
      s.written.push({ txId: written.txId, family: 'records', onChain, contentType });
    }
  });

  await step('independent records: status, content GET and HEAD, match', async () => {
    const text = Buffer.from(`blackbox ${run} independent`);
    const salted = need(s.independent.salted, 'the independent writes');
    for (const w of s.written.filter((x) => x.family === 'records')) {
      const st = await status('records', w.txId);
      check('confirmation' in st, `status of ${w.txId}: no confirmation field`);
      check(!('updatable' in st), `status of independent ${w.txId} carries updatable`);
      await content(w);
    }
    await matches('records', need(s.independent.sha, 'a SHA256 record'), '?encode=SHA256', text, true);
    await matches('records', need(s.independent.sha, 'a SHA256 record'), '?encode=SHA256', Buffer.from('other'), false);
    await matches('records', need(s.independent.base64, 'a Base64 record'), '?encode=SHA256', text, false);
    await matches(
      'records',
      need(s.independent.chained, 'a chained record'),
      '?encode=SHA256(pepper)|Base64',
      text,
      true,
    );
    const salt = `Salt/${run}:x-y+z`;
    await matches('records', salted, `?encode=SHA256(${salt.replace('+', '%2B')})`, text, true);
    // Without its salt the digest differs.
    await matches('records', salted, '?encode=SHA256', text, false);
  });

  /** A confirmation subscription opened before its record is mined; awaited by a later check. */
  let live: Promise<{ events: ConfirmationUpdate[] } | { error: unknown }> | undefined;
  await step('independent records: an Idempotency-Key replays the same write', async () => {
    const body = Buffer.from(`blackbox ${run} idempotent`);
    const headers = { 'idempotency-key': `blackbox-${run}` };
    const path = `${V1}/records?encode=Base64`;
    const first = await rest('POST', path, { body, headers });
    const written = expectStatus<{ txId: string }>(first, 200, 'an idempotent write');
    check(TX_ID.test(written.txId), `an idempotent write: txId ${written.txId}`);
    const onChain = Buffer.from(body.toString('base64'));
    s.written.push({ txId: written.txId, family: 'records', onChain, contentType: 'text/plain; event-encoded=Base64' });
    // Its confirmation is followed live from now on (GraphQL over SSE).
    live = subscribe(written.txId).then(
      (events) => ({ events }),
      (error: unknown) => ({ error }),
    );
    const again = await rest('POST', path, { body, headers });
    same(expectStatus(again, 200, 'the replay'), written, 'the replay');
    same(again.headers.get('idempotent-replayed'), 'true', 'the replay: Idempotent-Replayed');
    expectProblem(
      await rest('POST', path, { body: Buffer.from('another body'), headers }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
      'the key again with another body',
    );
  });

  const v1 = Buffer.from(`blackbox ${run} version one`);
  const v2 = Buffer.from(`blackbox ${run} version two`);
  let token1: string | undefined;
  let token2: string | undefined;
  await step('linked records: create, update with its updateToken, a stale token refused', async () => {
    const b64 = v1.toString('base64');
    const c = await write(`${V1}/linkedrecords?encode=Base64`, v1, [
      { contentType: 'text/plain; event-encoded=Base64', output: b64 },
    ]);
    check(typeof c.updateToken === 'string' && c.updateToken.length > 0, 'create returned no updateToken');
    s.chain.create = c.txId;
    token1 = c.updateToken;
    s.written.push({
      txId: c.txId,
      family: 'linkedrecords',
      onChain: Buffer.from(b64),
      contentType: 'text/plain; event-encoded=Base64',
    });
    same((await status('linkedrecords', c.txId)).updatable, true, 'a new chain is updatable');

    const d2 = sha256(v2);
    const u = await write(
      `${V1}/linkedrecords/${c.txId}/update?encode=SHA256&updateToken=${encodeURIComponent(token1 ?? '')}`,
      v2,
      [{ contentType: 'application/octet-stream; event-encoded=SHA256', output: d2.toString('hex') }],
    );
    check(typeof u.updateToken === 'string' && u.updateToken !== token1, 'update returned no fresh updateToken');
    s.chain.update = u.txId;
    token2 = u.updateToken;
    s.written.push({
      txId: u.txId,
      family: 'linkedrecords',
      onChain: d2,
      contentType: 'application/octet-stream; event-encoded=SHA256',
      prevTxId: c.txId,
    });

    // The create's token again, on the create (no longer the chain's end) and on the update.
    const again = await rest(
      'POST',
      `${V1}/linkedrecords/${c.txId}/update?encode=SHA256&updateToken=${encodeURIComponent(token1 ?? '')}`,
      { body: Buffer.from('a rival update') },
    );
    expectProblem(again, 409, 'NOT_LINKED_RECORDS_END', 'a second update of the create');
    const stale = await rest(
      'POST',
      `${V1}/linkedrecords/${u.txId}/update?encode=SHA256&updateToken=${encodeURIComponent(token1 ?? '')}`,
      { body: Buffer.from('with a stale token') },
    );
    expectProblem(stale, 400, 'UPDATE_TOKEN_PARAM_INVALID', "an update with the create's stale token");
  });

  await step('linked records: status updatable, content GET and HEAD', async () => {
    const create = need(s.chain.create, 'the linked create');
    const update = need(s.chain.update, 'the linked update');
    same((await status('linkedrecords', create)).updatable, false, 'the create after its update: updatable');
    same((await status('linkedrecords', update)).updatable, true, 'the update at the end: updatable');
    for (const w of s.written.filter((x) => x.family === 'linkedrecords')) await content(w);
  });

  await step('linked records: match with prevTxId', async () => {
    const create = need(s.chain.create, 'the linked create');
    const update = need(s.chain.update, 'the linked update');
    await matches('linkedrecords', create, '?encode=Base64', v1, true);
    await matches('linkedrecords', create, '?encode=Base64', v2, false);
    await matches('linkedrecords', update, `?encode=SHA256&prevTxId=${create}`, v2, true);
    await matches('linkedrecords', update, `?prevTxId=${create}`, v2, true); // no salt: encode may be omitted
    await matches('linkedrecords', update, `?encode=SHA256&prevTxId=${'ab'.repeat(32)}`, v2, false);
    expectProblem(
      await match('linkedrecords', update, '?encode=SHA256', v2),
      400,
      'PREV_TX_ID_PARAM_MISSING',
      'match of an update without prevTxId',
    );
  });

  await step('linked records: delete terminates the chain; navigate both ways', async () => {
    const create = need(s.chain.create, 'the linked create');
    const update = need(s.chain.update, 'the linked update');
    const res = await rest(
      'POST',
      `${V1}/linkedrecords/${update}/delete?updateToken=${encodeURIComponent(token2 ?? '')}`,
    );
    const del = expectStatus<{ txId: string }>(res, 200, 'delete');
    same(Object.keys(del), ['txId'], 'the delete result');
    check(TX_ID.test(del.txId), `delete: txId ${del.txId}`);
    s.chain.del = del.txId;
    s.written.push({
      txId: del.txId,
      family: 'linkedrecords',
      onChain: Buffer.alloc(0),
      contentType: 'application/octet-stream',
      prevTxId: update,
    });
    same((await status('linkedrecords', update)).updatable, false, 'the deleted record: updatable');
    same((await status('linkedrecords', del.txId)).updatable, false, 'the delete: updatable');
    const afterDelete = await rest('POST', `${V1}/linkedrecords/${del.txId}/update`, {
      body: Buffer.from('after the end'),
    });
    expectProblem(afterDelete, 409, 'NOT_LINKED_RECORDS_END', 'an update of a deleted chain');
    const delMatch = expectStatus<{ match: boolean }>(
      await match('linkedrecords', del.txId, `?prevTxId=${update}`),
      200,
      'match of the delete',
    );
    same(delMatch.match, true, 'match of the delete');
    const forward = expectStatus<{ txIds: string[]; endOfLinks: boolean; maxLinksRequestable: number }>(
      await rest('GET', `${V1}/linkedrecords/${create}/navigate?links=10`),
      200,
      'navigate forward',
    );
    same(forward.txIds, [update, del.txId], 'navigate forward from the create');
    same(forward.endOfLinks, true, 'navigate forward: endOfLinks');
    check(Number.isInteger(forward.maxLinksRequestable) && forward.maxLinksRequestable >= 2, 'maxLinksRequestable');
    const back = expectStatus<{ txIds: string[]; endOfLinks: boolean }>(
      await rest('GET', `${V1}/linkedrecords/${del.txId}/navigate?links=-1`),
      200,
      'navigate backward',
    );
    same(
      back,
      { txIds: [update], endOfLinks: false, maxLinksRequestable: forward.maxLinksRequestable },
      'navigate one link back from the delete',
    );
  });

  await step('linked records: of 8 concurrent updates of one record exactly one wins', async () => {
    const root = await write(`${V1}/linkedrecords?encode=SHA256`, Buffer.from(`blackbox ${run} race`), [
      {
        contentType: 'application/octet-stream; event-encoded=SHA256',
        output: sha256(Buffer.from(`blackbox ${run} race`)).toString('hex'),
      },
    ]);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        rest(
          'POST',
          `${V1}/linkedrecords/${root.txId}/update?encode=Base64&updateToken=${encodeURIComponent(root.updateToken ?? '')}`,
          { body: Buffer.from(`rival ${i}`) },
        ),
      ),
    );
    same(
      answers.map((a) => (a.status === 200 ? 'won' : `${a.status} ${errorCodeOf(a)}`)).sort(),
      [...Array<string>(7).fill('409 NOT_LINKED_RECORDS_END'), 'won'].sort(),
      'the answers to 8 concurrent updates',
    );
    const won = answers.findIndex((a) => a.status === 200);
    const winner = (answers[won]?.json as { txId: string }).txId;
    const chain = expectStatus<{ txIds: string[] }>(
      await rest('GET', `${V1}/linkedrecords/${root.txId}/navigate?links=10`),
      200,
      'navigate the raced chain',
    );
    same(chain.txIds, [winner], 'the raced chain');
    s.written.push(
      {
        txId: root.txId,
        family: 'linkedrecords',
        onChain: sha256(Buffer.from(`blackbox ${run} race`)),
        contentType: 'application/octet-stream; event-encoded=SHA256',
      },
      {
        txId: winner,
        family: 'linkedrecords',
        onChain: Buffer.from(Buffer.from(`rival ${won}`).toString('base64')),
        contentType: 'text/plain; event-encoded=Base64',
        prevTxId: root.txId,
      },
    );
  });

  await step('bad input: 4xx application/problem+json with an errorCode', async () => {
    const record = need(s.independent.sha, 'an independent record');
    const cases: [string, string, number, string, Parameters<Http['call']>[2]?][] = [
      ['GET', `${V1}/records/not-a-txid/status`, 400, 'TX_ID_PARAM_INVALID'],
      ['GET', `${V1}/records/${'ab'.repeat(32)}/status`, 404, 'TX_NOT_FOUND'],
      ['GET', `${V1}/linkedrecords/${record}/status`, 400, 'TX_INCORRECT_EVENT_TRANSACTION_TYPE'],
      ['GET', `${V1}/linkedrecords/${record}/navigate?links=1`, 400, 'INVALID_NAVIGATION_TRANSACTION_TYPE'],
      ['GET', `${V1}/linkedrecords/${s.chain.create ?? record}/navigate?links=0`, 400, 'LINKS_PARAM_INVALID'],
      ['POST', `${V1}/records?encode=MD5`, 400, 'UNKNOWN_ENCODER', { body: Buffer.from('x') }],
      ['POST', `${V1}/records?encode=SHA256(no%20spaces)`, 400, 'ENCODE_PARAM_INVALID', { body: Buffer.from('x') }],
      ['POST', `${V1}/records?encode=SHA256`, 400, 'CONTENT_IS_REQUIRED', { body: Buffer.alloc(0) }],
      ['GET', `${V1}/records/${record}/status`, 401, 'API_KEY_MISSING', { key: undefined }],
      ['GET', `${V1}/records/${record}/status`, 401, 'API_KEY_INVALID', { key: `idty_${'Z'.repeat(32)}` }],
      ['POST', IDENTITY, 400, 'VALIDATION_FAILED', { body: { name: 'no permission' } }],
      ['POST', IDENTITY, 400, 'BODY_INVALID_JSON', { body: '{"name":', contentType: 'application/json' }],
      ['GET', `${V1}/no-such-route`, 404, 'ROUTE_NOT_FOUND'],
    ];
    for (const [method, path, code, errorCode, options] of cases)
      expectProblem(await rest(method, path, options), code, errorCode, `${method} ${path}`);
  });

  await step('identity keys: create (raw key once), list, usage, revoke, re-activate, delete', async () => {
    const before = await usage();
    const key = await createKey({
      name: `bb-${run}`,
      issuerPermission: 'Issuer_User',
      verifierPermission: 'Verifier_Auditor',
    });
    created.add(key.id);
    check(UUID.test(key.id), `a key id that is not a UUID: ${key.id}`);
    const raw = need(key.rawKey, 'a rawKey in the create answer');
    check(/^idty_[A-Za-z0-9]{32}$/.test(raw), 'rawKey is not idty_ + 32 characters');
    same(key.keyMask, `idty_${'*'.repeat(28)}${raw.slice(-4)}`, 'keyMask');
    same([...key.permissions].sort(), ['Issuer_User', 'Verifier_Auditor'], 'permissions');
    same(key.revokedAt, null, 'revokedAt of a new key');
    check(Date.parse(key.expiresAt) > Date.parse(key.createdAt), 'expiresAt not after createdAt');
    same((await usage()).used, before.used + 1, 'usage after a create');

    const list = await rest('GET', IDENTITY);
    const keys = expectStatus<KeyJson[]>(list, 200, 'GET keys');
    same(keys[0]?.id, key.id, 'the newest key first in the list');
    check(!list.bytes.toString('utf8').includes(raw), 'the list shows a raw key');
    check(
      keys.every((k) => !('rawKey' in k)),
      'a list item carries rawKey',
    );

    // The new key reads; it may not manage keys (Issuer_User, Verifier_Auditor).
    expectProblem(await authenticates(raw), 404, 'TX_NOT_FOUND', 'a read with the new key');
    expectProblem(
      await rest('GET', IDENTITY, { key: raw }),
      403,
      'PERMISSION_DENIED',
      'key management with a non-admin key',
    );

    const revoked = expectStatus<KeyJson>(
      await rest('POST', `${IDENTITY}/${key.id}/revoke`, { body: { isRevoked: true } }),
      201,
      'revoke',
    );
    check(typeof revoked.revokedAt === 'string', 'revoke: revokedAt not set');
    const twice = expectStatus<KeyJson>(
      await rest('POST', `${IDENTITY}/${key.id}/revoke`, { body: { isRevoked: true } }),
      201,
      'revoke again',
    );
    same(twice.revokedAt, revoked.revokedAt, 'a second revoke changes nothing');
    await until(
      async () => (errorCodeOf(await authenticates(raw)) === 'API_KEY_REVOKED' ? true : undefined),
      5000,
      'a revoked key still authenticates',
    );
    const active = expectStatus<KeyJson>(
      await rest('POST', `${IDENTITY}/${key.id}/revoke`, { body: { isRevoked: false } }),
      201,
      're-activate',
    );
    same(active.revokedAt, null, 're-activate: revokedAt');
    await until(
      async () => ((await authenticates(raw)).status === 404 ? true : undefined),
      5000,
      'a re-activated key does not authenticate',
    );
    await deleteKey(key.id);
    same((await usage()).used, before.used, 'usage after the delete');
    const listed = expectStatus<KeyJson[]>(await rest('GET', IDENTITY), 200, 'GET keys');
    check(!listed.some((k) => k.id === key.id), 'a deleted key is still listed');
    await until(
      async () => ((await authenticates(raw)).status === 401 ? true : undefined),
      5000,
      'a deleted key still authenticates',
    );
    expectProblem(await rest('DELETE', `${IDENTITY}/${key.id}`), 404, 'API_KEY_NOT_FOUND', 'a second delete');
  });

  await step('identity keys: no privilege escalation', async () => {
    const before = await usage();
    const issuerAdmin = await createKey({ name: `bb-ia-${run}`, issuerPermission: 'Issuer_Admin' });
    created.add(issuerAdmin.id);
    const raw = need(issuerAdmin.rawKey, 'a rawKey');
    for (const body of [
      { name: 'bb-escalate-v', verifierPermission: 'Verifier_Admin' },
      { name: 'bb-escalate-vu', issuerPermission: 'Issuer_User', verifierPermission: 'Verifier_User' },
    ])
      expectProblem(
        await rest('POST', IDENTITY, { key: raw, body }),
        403,
        'identity_api_key_privilege_escalation',
        `an Issuer_Admin key creating ${JSON.stringify(body)}`,
      );
    same((await usage()).used, before.used + 1, 'usage after refused escalations');
    await deleteKey(issuerAdmin.id);
  });

  await step('identity keys: the per-tenant limit', async () => {
    const before = await usage();
    const free = before.limit - before.used;
    if (free > o.maxLimitKeys)
      throw new CheckSkipped(
        `${free} keys free under the limit of ${before.limit} (more than --max-limit-keys ${o.maxLimitKeys})`,
      );
    // Three more creates than fit, all at once: exactly the free ones succeed.
    const answers = await Promise.all(
      Array.from({ length: free + 3 }, (_, i) =>
        rest('POST', IDENTITY, { body: { name: `bb-limit-${i}-${run}`, verifierPermission: 'Verifier_User' } }),
      ),
    );
    for (const a of answers) if (a.status === 201) created.add((a.json as KeyJson).id);
    same(
      answers.map((a) => (a.status === 201 ? 'created' : `${a.status} ${errorCodeOf(a)}`)).sort(),
      [...Array<string>(free).fill('created'), ...Array<string>(3).fill('403 identity_api_key_limit_exceeded')].sort(),
      `the answers to ${free + 3} concurrent creates with ${free} keys free`,
    );
    same(await usage(), { used: before.limit, limit: before.limit }, 'usage at the limit');
    expectProblem(
      await rest('POST', IDENTITY, { body: { name: `bb-over-${run}`, verifierPermission: 'Verifier_User' } }),
      403,
      'identity_api_key_limit_exceeded',
      'a create over the limit',
    );
    same((await usage()).used, before.limit, 'usage after the refused create');
    for (const id of [...created]) await deleteKey(id);
    same((await usage()).used, before.used, 'usage after deleting the keys');
  });

  await step('legacy key endpoints: Deprecation, Sunset and Link headers', async () => {
    const headersOf = (a: Answer) => ({
      deprecation: a.headers.get('deprecation'),
      sunset: a.headers.get('sunset'),
      link: a.headers.get('link'),
    });
    const expectLegacy = (a: Answer, successor: string, what: string) => {
      const h = headersOf(a);
      same(h.deprecation, 'true', `${what}: Deprecation`);
      check(
        h.sunset !== null && /GMT$/.test(h.sunset) && !Number.isNaN(Date.parse(h.sunset)),
        `${what}: Sunset ${h.sunset}`,
      );
      same(h.link, `<${successor}>; rel="successor-version"`, `${what}: Link`);
      return h.sunset;
    };
    const list = await rest('GET', LEGACY);
    const sunset = expectLegacy(list, IDENTITY, 'legacy list');
    if (list.status === 410) {
      expectProblem(list, 410, 'LEGACY_ENDPOINT_REMOVED', 'legacy list after the sunset');
      check(Date.parse(sunset) <= Date.now(), `410 Gone before the Sunset date ${sunset}`);
      const use = await rest('GET', `${LEGACY}/usage`);
      expectProblem(use, 410, 'LEGACY_ENDPOINT_REMOVED', 'legacy usage after the sunset');
      expectLegacy(use, `${IDENTITY}/usage`, 'legacy usage');
      return;
    }
    expectStatus(list, 200, 'legacy list');
    check(Date.parse(sunset) > Date.now(), `legacy endpoints still answer after their Sunset date ${sunset}`);
    const use = await rest('GET', `${LEGACY}/usage`);
    expectLegacy(use, `${IDENTITY}/usage`, 'legacy usage');
    same(expectStatus(use, 200, 'legacy usage'), await usage(), 'legacy usage against the identity usage');
    const made = await rest('POST', LEGACY, { body: { name: `bb-legacy-${run}` } });
    expectLegacy(made, IDENTITY, 'legacy create');
    const key = expectStatus<{ id: string; rawKey: string; status: string }>(made, 201, 'legacy create');
    created.add(key.id);
    check(UUID.test(key.id), 'the legacy create did not issue a UUID key');
    same(key.status, 'Active', 'legacy create: status');
    for (const [method, successor, body] of [
      ['DELETE', `${IDENTITY}/${key.id}`, undefined],
      ['PATCH', `${IDENTITY}/${key.id}/revoke`, { status: 'Disabled' }],
    ] as const) {
      const res = await rest(method, `${LEGACY}/${key.id}`, body ? { body } : {});
      expectLegacy(res, successor, `legacy ${method} of a UUID`);
      const detail = expectProblem(res, 400, 'API_KEY_MANAGED_BY_IDENTITY', `legacy ${method} of a UUID`);
      check(/identity API key/.test(detail), `legacy ${method} of a UUID: detail "${detail}"`);
    }
    const refused = await rest('GET', LEGACY, { key: undefined });
    expectLegacy(refused, IDENTITY, 'a refused legacy call');
    expectProblem(refused, 401, 'API_KEY_MISSING', 'legacy list without a key');
    await deleteKey(key.id);
  });

  await step('verifier claims: GET /auth/granted-claims with a JWT', async () => {
    const claimsUrl = `${api}/auth/granted-claims`;
    const none = expectStatus<{ grantedClaims: string[] }>(
      await http.call('GET', claimsUrl),
      200,
      'claims without credentials',
    );
    same(none, { grantedClaims: [] }, 'claims without credentials');
    const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
    expectProblem(
      await http.call('GET', claimsUrl, bearer('not.a.jwt')),
      401,
      'INVALID_AUTHENTICATION_CREDENTIALS',
      'claims with a garbage token',
    );
    const sign = (secret: string, expires: string | number) => {
      let jwt = new SignJWT({ [o.claimsField ?? 'cognito:groups']: ['Issuer', `blackbox-${run}`] })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(`blackbox-${run}`)
        .setIssuedAt()
        .setExpirationTime(expires);
      if (o.jwtIssuer) jwt = jwt.setIssuer(o.jwtIssuer);
      if (o.jwtAudience) jwt = jwt.setAudience(o.jwtAudience);
      return jwt.sign(new TextEncoder().encode(secret));
    };
    expectProblem(
      await http.call('GET', claimsUrl, bearer(await sign(randomBytes(32).toString('hex'), '5m'))),
      401,
      'INVALID_AUTHENTICATION_CREDENTIALS',
      'claims with a token signed by another secret',
    );
    const secret = need(o.jwtSecret, 'AUTH_JWT_SECRET (the signed-token case)');
    const granted = expectStatus(await http.call('GET', claimsUrl, bearer(await sign(secret, '5m'))), 200, 'claims');
    same(granted, { grantedClaims: ['Issuer', `blackbox-${run}`] }, 'granted claims');
    const alias = await http.call('GET', `${api}${V1}/auth/granted-claims`, bearer(await sign(secret, '5m')));
    same(expectStatus(alias, 200, 'claims under /api/v1'), granted, 'claims under /api/v1');
    expectProblem(
      await http.call('GET', claimsUrl, bearer(await sign(secret, Math.floor(Date.now() / 1000) - 60))),
      401,
      'INVALID_AUTHENTICATION_CREDENTIALS',
      'claims with an expired token',
    );
  });

  await step(
    "every record reaches a Merkle proof that @bsv/sdk's MerklePath verifies against the headers source",
    async () => {
      check(s.written.length > 0, 'no record was written');
      const pending = new Set(s.written.map((w) => w.txId));
      await until(
        async () => {
          for (const w of s.written.filter((x) => pending.has(x.txId))) {
            const st = await status(w.family, w.txId);
            if (st.confirmation?.merkleProof) {
              s.confirmations.set(w.txId, st.confirmation);
              pending.delete(w.txId);
            }
          }
          return pending.size === 0 ? true : undefined;
        },
        o.proofTimeoutMs,
        () => `records without a proof: ${[...pending].join(', ')}`,
      );
      for (const w of s.written) {
        const c = s.confirmations.get(w.txId) as Confirmation;
        s.blockHeights.set(w.txId, await verifyConfirmation(w.txId, c, headersUrl));
        // Match answers carry the same confirmation once mined.
        if (w.family === 'records' && w.txId === s.independent.sha) {
          const m = expectStatus<{ confirmation: Confirmation }>(
            await match('records', w.txId, '?encode=SHA256', Buffer.from(`blackbox ${run} independent`)),
            200,
            'match after mining',
          );
          same(m.confirmation.merkleProof, c.merkleProof, 'the match answer proof against the status proof');
        }
      }
    },
  );

  await step('receipts: Atomic BEEF that @bsv/sdk reads and verifies, the bytes on chain', async () => {
    check(s.confirmations.size === s.written.length, 'needs every record proven');
    const tracker = headersTracker(headersUrl);
    for (const w of s.written) {
      const r = expectStatus<Receipt>(
        await rest('GET', `${V1}/${w.family}/${w.txId}/receipt`),
        200,
        `receipt of ${w.txId}`,
      );
      const c = s.confirmations.get(w.txId) as Confirmation;
      same(
        [r.txId, r.family, r.blockHash, r.blockHeader, r.blockHeight, r.merkleProof],
        [w.txId, w.family, c.blockHash, c.merkleProof.target, s.blockHeights.get(w.txId), c.merkleProof],
        `receipt of ${w.txId} against its status`,
      );
      const tx = Transaction.fromAtomicBEEF(Utils.toArray(r.beef, 'hex'));
      same(tx.id('hex'), w.txId, `receipt of ${w.txId}: the BEEF's transaction`);
      same(tx.toHex(), r.rawTx, `receipt of ${w.txId}: rawTx against the BEEF`);
      same((tx.merklePath as MerklePath).blockHeight, r.blockHeight, `receipt of ${w.txId}: BUMP height`);
      check(await tx.verify(tracker), `receipt of ${w.txId}: Transaction.verify against the headers source`);
      if (w.onChain.length > 0)
        check(
          r.rawTx.includes(w.onChain.toString('hex')),
          `receipt of ${w.txId}: the content is not in the transaction`,
        );
      if (w.family === 'linkedrecords') {
        same(r.prevTxId, w.prevTxId ?? null, `receipt of ${w.txId}: prevTxId`);
      }
    }
  });

  await step('GraphQL: chain traversal, records and blocks over HTTP', async () => {
    const create = need(s.chain.create, 'the linked chain');
    const update = need(s.chain.update, 'the linked chain');
    const del = need(s.chain.del, 'the linked chain');
    const data = await gqlData(
      `query($t: String!) { linkedRecord(txId: $t) { __typename ... on LinkedRecord {
        txId kind position chainId updatable next { txId kind next { txId kind updatable previous { txId } } }
        chain(first: 10) { totalCount edges { node { txId kind position content { base64 } } } } } } }`,
      { t: create },
    );
    const lr = data['linkedRecord'] as {
      __typename: string;
      chainId: string;
      updatable: boolean;
      next: {
        txId: string;
        kind: string;
        next: { txId: string; kind: string; updatable: boolean; previous: { txId: string } };
      };
      chain: {
        totalCount: number;
        edges: { node: { txId: string; kind: string; position: number; content: { base64: string } } }[];
      };
    };
    same(lr.__typename, 'LinkedRecord', 'linkedRecord type');
    same(
      { chainId: lr.chainId, updatable: lr.updatable },
      { chainId: create, updatable: false },
      'the create over GraphQL',
    );
    same(
      [
        lr.next.txId,
        lr.next.kind,
        lr.next.next.txId,
        lr.next.next.kind,
        lr.next.next.updatable,
        lr.next.next.previous.txId,
      ],
      [update, 'UPDATE', del, 'DELETE', false, update],
      'next / previous traversal',
    );
    same(lr.chain.totalCount, 3, 'chain totalCount');
    same(
      lr.chain.edges.map((e) => [e.node.txId, e.node.kind, e.node.position]),
      [
        [create, 'CREATE', 0],
        [update, 'UPDATE', 1],
        [del, 'DELETE', 2],
      ],
      'chain edges',
    );
    for (const e of lr.chain.edges) {
      const w = s.written.find((x) => x.txId === e.node.txId);
      same(e.node.content.base64, w?.onChain.toString('base64'), `GraphQL content of ${e.node.txId}`);
    }

    const salted = need(s.independent.salted, 'an independent record');
    const rec = (
      await gqlData(
        `query($t: String!) { record(txId: $t) { __typename ... on IndependentRecord { txId kind encoding contentType
        confirmation { blockHash confirmedBlocks merkleProof { index txOrId target nodes targetType proofType composite } } } } }`,
        { t: salted },
      )
    )['record'] as { kind: string; encoding: string[]; confirmation: Confirmation | null };
    same([rec.kind, rec.encoding], ['INDEPENDENT', ['SHA256']], 'record over GraphQL');
    same(rec.confirmation?.merkleProof, s.confirmations.get(salted)?.merkleProof, 'GraphQL proof against REST status');

    const errors = await gqlData(
      `query($i: String!, $u: String!) {
        wrongFamily: linkedRecord(txId: $i) { __typename ... on UserError { code } }
        unknown: record(txId: $u) { __typename ... on UserError { code } } }`,
      { i: salted, u: 'ab'.repeat(32) },
    );
    same(
      errors,
      {
        wrongFamily: { __typename: 'InvalidArgumentError', code: 'TX_INCORRECT_EVENT_TRANSACTION_TYPE' },
        unknown: { __typename: 'NotFoundError', code: 'TX_NOT_FOUND' },
      },
      'GraphQL typed errors',
    );

    const c = s.confirmations.get(salted) as Confirmation;
    const blocks = await gqlData(
      `query($h: String!) { tip { height } block(hash: $h) { __typename ... on Block { hash height header merkleRoot } } }`,
      { h: c.blockHash },
    );
    const block = blocks['block'] as { hash: string; height: number; header: string; merkleRoot: string };
    same(
      { hash: block.hash, height: block.height, header: block.header },
      { hash: c.blockHash, height: s.blockHeights.get(salted), header: c.merkleProof.target },
      'GraphQL block against the proof and the headers source',
    );
    check((blocks['tip'] as { height: number }).height >= block.height, 'GraphQL tip below a proven block');

    const anonymous = await gql('{ tip { height } }', {}, null);
    same(anonymous.errors?.[0]?.extensions?.code, 'API_KEY_MISSING', 'a GraphQL read without a key');
  });

  await step('GraphQL: a confirmation subscription over SSE follows a record until it is mined', async () => {
    const outcome = await need(live, 'the idempotent write');
    if ('error' in outcome) throw outcome.error;
    const last = outcome.events[outcome.events.length - 1];
    check(last !== undefined, 'the subscription ended without an event');
    const txId = last.txId;
    same(
      { reached: last.reached, publication: last.publication, blockHash: last.confirmation?.blockHash },
      { reached: true, publication: 'PUBLISHED', blockHash: s.confirmations.get(txId)?.blockHash },
      'the last event',
    );
    check(last.confirmedBlocks >= 1, `the last event: confirmedBlocks ${last.confirmedBlocks}`);
    check(
      outcome.events.slice(0, -1).every((e) => !e.reached),
      'an event before the last one says reached',
    );
  });

  await step('GraphQL: key queries over HTTP', async () => {
    const data = await gqlData(
      '{ me { tenant permissions key { id keyMask } } apiKeys { id name keyMask permissions revokedAt expiresAt } apiKeyUsage { used limit } }',
    );
    const restKeys = expectStatus<KeyJson[]>(await rest('GET', IDENTITY), 200, 'GET keys');
    same(
      data['apiKeys'],
      restKeys.map((k) => ({
        id: k.id,
        name: k.name,
        keyMask: k.keyMask,
        permissions: k.permissions,
        revokedAt: k.revokedAt,
        expiresAt: k.expiresAt,
      })),
      'apiKeys against REST',
    );
    same(data['apiKeyUsage'], await usage(), 'apiKeyUsage against REST');
    const me = data['me'] as { permissions: string[]; key: { keyMask: string } };
    check(
      me.permissions.includes('Issuer_Admin') && me.permissions.includes('Verifier_Admin'),
      `me.permissions ${JSON.stringify(me.permissions)}`,
    );
    same(me.key.keyMask.slice(-4), o.key.slice(-4), "me: the calling key's mask");
    check(!JSON.stringify(data).includes(o.key), 'GraphQL shows the raw key');
  });

  // Keys a failed check left behind.
  for (const id of [...created]) await rest('DELETE', `${IDENTITY}/${id}`).catch(() => undefined);
  return { results, retries: http.retries };
}
