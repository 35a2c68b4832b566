import { createLogger } from '@proofline/shared-logger';
import { startGraphQLServer } from './server';
import type { RunningGraphQL } from './server';
import { startGraphQL } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
  readonly body: { errors?: { message: string; extensions?: Record<string, unknown> }[]; data?: unknown } | undefined;
}

const QUERY = 'query Echo($t: String!) { record(txId: $t) { __typename } }';

describe('GraphQL: bad input is a request error with a code, never an internal error', () => {
  let fx: GraphQLFixture;
  let running: RunningGraphQL;
  let url: string;
  beforeAll(async () => {
    fx = await startGraphQL({ HOST: '127.0.0.1' });
    running = await startGraphQLServer(fx.deps, fx.config, createLogger({ level: 'silent', name: 'test' }), 0);
    url = `http://127.0.0.1:${running.port}/graphql`;
  });
  afterAll(async () => {
    await running.close(0);
    await fx.close();
  });

  const send = async (init: RequestInit & { search?: string }): Promise<Answer> => {
    const res = await fetch(`${url}${init.search ?? ''}`, init);
    const text = await res.text();
    let body: Answer['body'];
    try {
      body = JSON.parse(text) as Answer['body'];
    } catch {
      body = undefined;
    }
    return { status: res.status, contentType: res.headers.get('content-type'), text, body };
  };
  const json = (body: string, accept?: string): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) },
    body,
  });
  const expectCode = (a: Answer, status: number, code: string) => {
    expect({ status: a.status, code: a.body?.errors?.[0]?.extensions?.['code'] }).toEqual({ status, code });
    expect(a.text).not.toContain('originalError');
    expect(a.text).not.toContain('INTERNAL_SERVER_ERROR');
    expect(a.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  };

  it('a variable of the wrong type is BAD_USER_INPUT (400 for graphql-response+json, 200 for legacy application/json)', async () => {
    const strict = await send(
      json(JSON.stringify({ query: QUERY, variables: { t: 1 } }), 'application/graphql-response+json'),
    );
    expectCode(strict, 400, 'BAD_USER_INPUT');
    expect(strict.body?.errors?.[0]?.message).toMatch(/^Variable "\$t" got invalid value 1/);
    expect(strict.body?.data).toBeUndefined();
    // GraphQL-over-HTTP: a well-formed request with application/json answers 200 with the errors.
    expectCode(await send(json(JSON.stringify({ query: QUERY, variables: { t: 1 } }))), 200, 'BAD_USER_INPUT');
    expectCode(
      await send(json(JSON.stringify({ query: QUERY, variables: {} }), 'application/graphql-response+json')),
      400,
      'BAD_USER_INPUT',
    );
  });

  it('a GET with malformed variables or extensions JSON is 400 BAD_REQUEST', async () => {
    const q = `?query=${encodeURIComponent(QUERY)}`;
    expectCode(await send({ search: `${q}&variables=%7Bbad` }), 400, 'BAD_REQUEST');
    expectCode(await send({ search: `${q}&variables=%7B%7D&extensions=%7Bbad` }), 400, 'BAD_REQUEST');
    expectCode(await send({ search: `${q}&variables=%5B1%5D` }), 400, 'BAD_REQUEST');
    expectCode(await send({ search: `${q}&variables=7` }), 400, 'BAD_REQUEST');
    // a well-formed GET still runs
    const ok = await send({ search: `?query=${encodeURIComponent('{ health }')}` });
    expect(ok.status).toBe(200);
    expect(ok.body?.data).toEqual({ health: 'ok' });
  });

  it('an urlencoded POST with malformed variables is 400 BAD_REQUEST', async () => {
    const a = await send({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `query=${encodeURIComponent(QUERY)}&variables=%7B`,
    });
    expectCode(a, 400, 'BAD_REQUEST');
  });

  it('invalid JSON, an empty body and non-object bodies are 400 BAD_REQUEST without originalError', async () => {
    for (const body of ['{"query":', '', '1', 'null', '"x"', 'true']) {
      expectCode(await send(json(body)), 400, 'BAD_REQUEST');
    }
    expectCode(await send(json(JSON.stringify({ query: 1 }))), 400, 'BAD_REQUEST');
    expectCode(await send(json(JSON.stringify({ query: '{ health }', variables: 'x' }))), 400, 'BAD_REQUEST');
    expectCode(await send(json(JSON.stringify({ query: '{ health }', extensions: 3 }))), 400, 'BAD_REQUEST');
  });

  it('batched arrays are refused with 400 BAD_REQUEST', async () => {
    expectCode(await send(json(JSON.stringify([{ query: '{ health }' }]))), 400, 'BAD_REQUEST');
  });

  it('a wrong content type is 415 UNSUPPORTED_MEDIA_TYPE and an unacceptable Accept is 406 NOT_ACCEPTABLE, with a body', async () => {
    expectCode(
      await send({ method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{ health }' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectCode(await send({ method: 'POST', body: new Uint8Array([1, 2, 3]) }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectCode(
      await send({
        ...json(JSON.stringify({ query: '{ health }' })),
        headers: { 'content-type': 'application/json', accept: 'image/png' },
      }),
      406,
      'NOT_ACCEPTABLE',
    );
  });

  it('syntax errors and unknown fields keep their GraphQL codes', async () => {
    expectCode(
      await send(json(JSON.stringify({ query: '{' }), 'application/graphql-response+json')),
      400,
      'GRAPHQL_PARSE_FAILED',
    );
    expectCode(
      await send(json(JSON.stringify({ query: '{ nope }' }), 'application/graphql-response+json')),
      400,
      'GRAPHQL_VALIDATION_FAILED',
    );
    expectCode(
      await send({ method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' }),
      405,
      'BAD_REQUEST',
    );
  });
});
