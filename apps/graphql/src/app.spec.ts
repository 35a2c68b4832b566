import { createGraphQL } from './app';
import { startGraphQL } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

describe('graphql app', () => {
  let f: GraphQLFixture;
  let key = '';
  beforeAll(async () => {
    f = await startGraphQL();
    key = (await f.seedKey({ permissions: ['Verifier_Auditor'] })).rawKey;
  });
  afterAll(() => f.close());

  it('answers the health query without a key', async () => {
    const res = await f.gql('{ health version }');
    expect(res).toEqual({ status: 200, data: { health: 'ok', version: expect.any(String) } });
  });

  it('rejects an unknown field with a validation error and a code, not a 500', async () => {
    const res = await f.gql('{ nope }');
    expect(res.status).toBeLessThan(500);
    expect(res.errors?.[0]?.message).toContain('Cannot query field "nope"');
    expect(res.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const syntax = await f.gql('{ linkedRecord(');
    expect(syntax.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
  });

  it('masks unexpected errors: no internal message reaches the client', async () => {
    const broken = createGraphQL({
      ...f.deps,
      chain: {
        ...f.deps.chain,
        tip: () => Promise.reject(new Error('redis said: secret internal detail at 10.0.0.1')),
      },
    });
    const res = await broken.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ query: '{ tip { height } health }' }),
    });
    const body = (await res.json()) as { data: unknown; errors: { message: string; extensions: unknown }[] };
    expect(body.data).toEqual({ tip: null, health: 'ok' });
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: 'Unexpected error.',
        extensions: { code: 'INTERNAL_SERVER_ERROR', status: 500 },
      }),
    ]);
    expect(JSON.stringify(body)).not.toContain('secret');
  });

  it('serves GraphiQL outside production only', async () => {
    const page = await f.yoga.fetch('http://localhost/graphql', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('GraphiQL');
    const prod = createGraphQL({ ...f.deps, config: { ...f.config, nodeEnv: 'production' } });
    const res = await prod.fetch('http://localhost/graphql', { headers: { accept: 'text/html' } });
    expect(await res.text()).not.toContain('GraphiQL');
  });
});
