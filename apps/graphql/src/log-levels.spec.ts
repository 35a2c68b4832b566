import { createLogger } from '@proofline/shared-logger';
import { captureLogs, rawExchange } from '@proofline/shared-testing';
import { startGraphQLServer } from './server';
import type { RunningGraphQL } from './server';
import { startGraphQL } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

/**
 * Log levels match blame: a batch of client mistakes (bad JSON, wrong variable types, unknown
 * fields, bad keys, oversize bodies, parser refusals) leaves no `error` line; an operator alerting
 * on error lines is paged for server faults only.
 */
describe('GraphQL logs: client mistakes are never logged at error', () => {
  let fx: GraphQLFixture;
  let running: RunningGraphQL;
  let url: string;
  let key: string;
  const { sink, lines } = captureLogs();
  beforeAll(async () => {
    fx = await startGraphQL({ HOST: '127.0.0.1', GRAPHQL_MAX_BODY_BYTES: '4096' });
    const logger = createLogger({ level: 'debug', name: 'test-graphql', destination: sink });
    running = await startGraphQLServer({ ...fx.deps, logger }, fx.config, logger, 0);
    url = `http://127.0.0.1:${running.port}/graphql`;
    key = (await fx.seedKey({ permissions: ['Verifier_User'] })).rawKey;
  });
  afterAll(async () => {
    await running.close(0);
    await fx.close();
  });

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it('a batch of bad requests: 4xx answers with codes, no error line, the refusals at info/debug', async () => {
    const withKey = { 'x-api-key': key };
    const statuses: number[] = [];
    const answers = [
      post('{"query": "{ health }"', withKey), // bad JSON
      post('not json at all'),
      post(
        JSON.stringify({ query: 'query($t: String!) { record(txId: $t) { __typename } }', variables: { t: 7 } }),
        withKey,
      ),
      post(JSON.stringify({ query: 'query($n: Int) { tip { height } }', variables: { n: 'x' } }), withKey),
      post(JSON.stringify({ query: 'query($t: String!) { record(txId: $t) { __typename } }', variables: {} }), withKey),
      post(JSON.stringify({ query: '{ noSuchField }' }), withKey),
      post(JSON.stringify({ query: '{ tip { nope } }' }), withKey),
      post(JSON.stringify({ query: '{ health ' })),
      post(JSON.stringify({ query: '{ tip { height } }' }), { 'x-api-key': 'idty_wrong' }),
      post(JSON.stringify({ query: '{ tip { height } }' })),
      post(JSON.stringify({ query: '{ record(txId: "zz") { __typename } }' }), withKey),
      post(JSON.stringify({ query: `{ health } # ${'x'.repeat(10_000)}` })),
      post(JSON.stringify([{ query: '{ health }' }])),
      fetch(`${url}?query=%7Bhealth&variables=%7Bbad`),
      fetch(url, { method: 'PUT', body: 'x' }),
    ];
    for (const res of await Promise.all(answers)) {
      statuses.push(res.status);
      await res.text();
    }
    expect(statuses.every((s) => s < 500)).toBe(true);
    const big = Buffer.alloc(5 * 1024 * 1024, 0x61);
    const oversize = await rawExchange(
      running.port,
      `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n`,
      big,
    );
    expect(oversize.status).toBe(413);
    expect((await rawExchange(running.port, 'GARBAGE\r\n\r\n')).status).toBe(400);
    expect((await rawExchange(running.port, 'GET /graphql HTTP/1.1\r\nHost: x\r\nExpect: nope\r\n\r\n')).status).toBe(
      417,
    );

    const errors = lines.filter((l) => l['level'] === 'error' || l['level'] === 'fatal');
    expect(errors).toEqual([]);
    // The refusals with an errorCode are at info (edge) or debug (GraphQL request errors).
    const coded = lines.filter((l) => typeof l['errorCode'] === 'string');
    expect(coded.length).toBeGreaterThan(0);
    expect(coded.every((l) => l['level'] === 'info' || l['level'] === 'debug')).toBe(true);
  });
});
