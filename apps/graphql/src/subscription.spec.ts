import { createLogger } from '@proofline/shared-logger';
import { eventually } from '@proofline/shared-testing';
import { createGraphQLDeps } from './deps';
import type { OwnedGraphQLDeps } from './deps';
import { readSse, startGraphQL } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

interface Update {
  txId: string;
  publication: string;
  confirmedBlocks: number;
  depth: number;
  reached: boolean;
  confirmation: { blockHash: string; merkleProof: { txOrId: string } } | null;
}
type Event = { data?: { confirmation: Update } | null; errors?: { message: string; extensions?: { code?: string } }[] };

const SUBSCRIPTION = `subscription($txId: String!, $depth: Int) {
  confirmation(txId: $txId, depth: $depth) { txId publication confirmedBlocks depth reached confirmation { blockHash merkleProof { txOrId } } } }`;

function subscribe(url: string, variables: Record<string, unknown>, key?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (key !== undefined) headers['x-api-key'] = key;
  return fetch(url, { method: 'POST', headers, body: JSON.stringify({ query: SUBSCRIPTION, variables }) });
}

// Real workers: the records publisher and the block producer (BLOCK_INTERVAL_MS 200), which
// publishes a block event on Redis after each block; two GraphQL instances each hear it.
// The devnet node, its funding split and the workers take a few seconds to start on a busy machine.
jest.setTimeout(60_000);

describe('subscription confirmation(txId, depth) over SSE', () => {
  let f: GraphQLFixture;
  let second: OwnedGraphQLDeps;
  let key = '';
  let urls: string[] = [];

  beforeAll(async () => {
    f = await startGraphQL({ BLOCK_INTERVAL_MS: '200' }, undefined, { publish: true });
    key = (await f.seedKey({ permissions: ['Verifier_User'] })).rawKey;
    second = await createGraphQLDeps(f.config, createLogger({ level: 'silent', name: 'test-graphql-2' }), f.deps.clock);
    urls = [(await f.listen()).url, (await f.listen(second)).url];
    await f.startChain();
  });
  afterAll(async () => {
    await f.close();
    await second.close();
  });

  it('pushes the status of a fresh write until the requested depth, on every instance', async () => {
    const { txId } = await f.writer.createLinked(
      { tenant: 'default' },
      { body: Buffer.from('fresh'), encode: 'SHA256' },
    );
    const streams = await Promise.all(urls.map((url) => subscribe(url, { txId, depth: 3 }, key)));
    for (const res of streams) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
    }
    const [a, b] = await Promise.all(streams.map((res) => readSse<Event>(res)));
    for (const events of [a ?? [], b ?? []]) {
      expect(events.every((e) => e.errors === undefined)).toBe(true);
      const updates = events.map((e) => e.data!.confirmation);
      expect(updates.length).toBeGreaterThanOrEqual(2);
      const lastUpdate = updates[updates.length - 1]!;
      expect(lastUpdate).toMatchObject({ txId, publication: 'PUBLISHED', depth: 3, reached: true });
      expect(lastUpdate.confirmedBlocks).toBeGreaterThanOrEqual(3);
      expect(lastUpdate.confirmation?.merkleProof.txOrId).toBe(txId);
      expect(updates.slice(0, -1).every((u) => !u.reached)).toBe(true);
      const counts = updates.map((u) => u.confirmedBlocks);
      expect(counts).toEqual([...counts].sort((x, y) => x - y));
    }
    // the stored state agrees (the same use case as REST status)
    const status = await f.deps.records.status('linked', txId);
    expect(status.confirmation?.blockHash).toBe(b?.[b.length - 1]?.data?.confirmation.confirmation?.blockHash);
  }, 30_000);

  it('a record already at depth gets one final update at once', async () => {
    const { txId } = await f.writer.writeIndependent(
      { tenant: 'default' },
      { body: Buffer.from('x'), encode: undefined },
    );
    await eventually(async () => ((await f.deps.records.confirmation(txId))?.confirmedBlocks ?? 0) >= 1, 10_000);
    const events = await readSse<Event>(await subscribe(urls[0] ?? '', { txId }, key));
    expect(events).toHaveLength(1);
    expect(events[0]?.data?.confirmation).toMatchObject({ txId, depth: 1, reached: true });
  }, 20_000);

  it.each([
    ['no key', { txId: 'a'.repeat(64) }, undefined, 'API_KEY_MISSING'],
    ['a malformed txId', { txId: 'nope' }, 'key', 'TX_ID_PARAM_INVALID'],
    ['depth 0', { txId: 'a'.repeat(64), depth: 0 }, 'key', 'DEPTH_PARAM_INVALID'],
    ['depth 101', { txId: 'a'.repeat(64), depth: 101 }, 'key', 'DEPTH_PARAM_INVALID'],
    ['an unknown txId', { txId: 'a'.repeat(64) }, 'key', 'TX_NOT_FOUND'],
  ])('%s: one error event with a stable code, then the stream ends', async (_name, variables, which, code) => {
    const res = await subscribe(urls[1] ?? '', variables, which === 'key' ? key : undefined);
    const events = await readSse<Event>(res);
    expect(events).toHaveLength(1);
    expect(events[0]?.errors?.[0]?.extensions).toMatchObject({ code });
  });
});
