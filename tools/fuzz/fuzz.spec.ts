import { testRedis, testRedisEnv, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { fuzz, fuzzRequest, startStack, violations } from './fuzz';
import type { FuzzStack } from './fuzz';

describe('fuzzed requests over REST and GraphQL (real API, GraphQL and worker processes)', () => {
  const prefix = uniquePrefix('fuzz');
  const { cleanup } = testRedis(prefix);
  let stack: FuzzStack;
  beforeAll(async () => {
    stack = await startStack(testRedisUrl(), prefix, 5000, testRedisEnv());
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await cleanup();
  }, 30_000);

  it('is reproducible from its seed', () => {
    expect(fuzzRequest(7, 123, 'k')).toEqual(fuzzRequest(7, 123, 'k'));
    expect(fuzzRequest(7, 123, 'k')).not.toEqual(fuzzRequest(8, 123, 'k'));
  });

  it('the checker flags what it must', () => {
    const rest = { target: 'rest' as const, method: 'GET', path: '/', headers: {} };
    expect(
      violations(rest, {
        status: 500,
        headers: { 'content-type': 'application/problem+json' },
        body: '{"errorCode":"INTERNAL_ERROR"}',
      }),
    ).toContain('status 500');
    expect(violations(rest, { status: 400, headers: { 'content-type': 'text/html' }, body: 'x' })).toEqual([
      'REST 400 is text/html, not problem+json',
    ]);
    expect(
      violations(
        { ...rest, target: 'graphql' },
        { status: 400, headers: {}, body: '{"extensions":{"originalError":{}}}' },
      ),
    ).toEqual(['originalError in body']);
    expect(
      violations(
        { ...rest, target: 'graphql' },
        { status: 200, headers: {}, body: 'Error: x\n    at foo (/a/b.ts:1:2)' },
      ),
    ).toEqual(['stack trace in body']);
    expect(
      violations({ ...rest, path: '/readiness' }, { status: 503, headers: {}, body: '{"status":"not-ready"}' }),
    ).toEqual([]);
    expect(violations({ ...rest, path: '/readiness' }, { status: 500, headers: {}, body: '{}' })).toEqual([
      'status 500',
    ]);
  });

  it('3,000 seeded requests: no answer >= 500, no originalError or stack, every REST 4xx is problem+json with an errorCode', async () => {
    const figures = await fuzz({
      seed: 20261122,
      count: 3000,
      concurrency: 16,
      restPort: stack.restPort,
      graphqlPort: stack.graphqlPort,
      key: stack.key,
    });
    expect(figures.failures).toEqual([]);
    const answered = Object.values(figures.byStatus).reduce((a, b) => a + b, 0);
    expect(answered).toBeGreaterThan(2900);
    // the run reached deep: successful reads on both apps and refusals of many kinds
    expect(figures.byStatus['rest 200']).toBeGreaterThan(50);
    expect(figures.byStatus['graphql 200']).toBeGreaterThan(200);
    for (const label of ['rest 400', 'rest 401', 'rest 404', 'graphql 400', 'graphql 415', 'rest 431'])
      expect(figures.byStatus[label]).toBeGreaterThan(0);
  }, 180_000);
});
