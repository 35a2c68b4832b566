import { loadConfig } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { createGraphQL } from './app';

describe('graphql app', () => {
  const yoga = createGraphQL({ config: loadConfig({ NODE_ENV: 'test' }), logger: createLogger({ level: 'silent', name: 't' }) });

  it('answers the health query', async () => {
    const res = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ health version }' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { health: 'ok', version: '0.1.0' } });
  });

  it('rejects an unknown field with a validation error, not a 500', async () => {
    const res = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ nope }' }),
    });
    // yoga answers GraphQL validation errors with 200 for application/json clients
    expect(res.status).toBeLessThan(500);
    const body = (await res.json()) as { errors: { message: string }[] };
    expect(body.errors[0]?.message).toContain('Cannot query field "nope"');
  });
});
