import { startGraphQL, writeChain } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

const LINKS = 1000;

// No N+1: a page of any size costs a fixed number of batched use-case calls (each one Redis round
// trip: RecordStore.metaMany / bytesMany / chainRange pipelines, ArcProofStore.inclusions).
describe('GraphQL traversal of a 1,000-link chain (dataloaders)', () => {
  let f: GraphQLFixture;
  let key = '';
  let chain: string[] = [];
  let calls: Record<string, jest.SpyInstance>;

  beforeAll(async () => {
    f = await startGraphQL({}, undefined, { fund: LINKS + 50 });
    key = (await f.seedKey({ permissions: ['Verifier_User'] })).rawKey;
    chain = await writeChain(f.writer, LINKS, { body: (i) => `link ${i}` });
    const r = f.deps.records;
    calls = {
      meta: jest.spyOn(r, 'meta'),
      chainPage: jest.spyOn(r, 'chainPage'),
      metaMany: jest.spyOn(r, 'metaMany'),
      contentMany: jest.spyOn(r, 'contentMany'),
      confirmationMany: jest.spyOn(r, 'confirmationMany'),
      status: jest.spyOn(r, 'status'),
      content: jest.spyOn(r, 'content'),
    };
  }, 120_000);
  afterAll(() => f.close());
  beforeEach(() => Object.values(calls).forEach((c) => c.mockClear()));

  const counts = () => Object.fromEntries(Object.entries(calls).map(([name, spy]) => [name, spy.mock.calls.length]));

  const QUERY = `query($txId: String!, $first: Int, $after: String) {
    linkedRecord(txId: $txId) { ... on LinkedRecord {
      chain(first: $first, after: $after) {
        totalCount pageInfo { hasNextPage endCursor }
        edges { cursor node { txId kind position updatable content { text base64 } confirmation { confirmedBlocks }
          previous { txId position content { text } } next { txId } } }
      } } } }`;

  /** One page with content and confirmations: one read of the start, one page, one batch per kind of data. */
  const ONE_BATCH_EACH = {
    meta: 1,
    chainPage: 1,
    metaMany: 1,
    contentMany: 1,
    confirmationMany: 1,
    status: 0,
    content: 0,
  };

  type Result = {
    linkedRecord: {
      chain: {
        totalCount: number;
        pageInfo: { hasNextPage: boolean; endCursor: string };
        edges: {
          node: {
            txId: string;
            position: number;
            content: { text: string };
            previous: { txId: string; content: { text: string } } | null;
            next: { txId: string } | null;
          };
        }[];
      };
    };
  };

  it('one query of 1,000 records with content: one batched read per kind of data', async () => {
    const res = await f.gql<Result>(QUERY, { txId: chain[0], first: LINKS }, key);
    expect(res.errors).toBeUndefined();
    const edges = res.data!.linkedRecord.chain.edges;
    expect(edges).toHaveLength(LINKS);
    expect(edges.map((e) => e.node.txId)).toEqual(chain);
    expect(edges[500]?.node).toMatchObject({
      position: 500,
      content: { text: 'link 500' },
      previous: { txId: chain[499], content: { text: 'link 499' } },
      next: { txId: chain[501] },
    });
    expect(res.data!.linkedRecord.chain.pageInfo.hasNextPage).toBe(false);
    // previous/next resolve from the same loader cache as the nodes: still one metaMany() batch
    expect(counts()).toEqual(ONE_BATCH_EACH);
    expect(calls['metaMany']?.mock.calls[0]?.[0]).toHaveLength(LINKS);
    expect(calls['contentMany']?.mock.calls[0]?.[0]).toHaveLength(LINKS);
  });

  it('ten pages of 100: the same constant cost per page', async () => {
    let after: string | undefined;
    const seen: string[] = [];
    for (let page = 0; page < 10; page++) {
      Object.values(calls).forEach((c) => c.mockClear());
      const res = await f.gql<Result>(QUERY, { txId: chain[0], first: 100, after }, key);
      expect(res.errors).toBeUndefined();
      const c = res.data!.linkedRecord.chain;
      seen.push(...c.edges.map((e) => e.node.txId));
      after = c.pageInfo.endCursor;
      expect(c.pageInfo.hasNextPage).toBe(page < 9);
      // metaMany(): the page's nodes, then one more batch for the neighbours outside the page
      // (previous of the first node, next of the last); the in-page ones come from the cache
      // (page 0 has no previous outside the page, so its neighbours' content is one batch fewer)
      expect(counts()).toEqual({
        meta: 1,
        chainPage: 1,
        metaMany: 2,
        contentMany: page === 0 ? 1 : 2,
        confirmationMany: 1,
        status: 0,
        content: 0,
      });
      expect(calls['metaMany']?.mock.calls[1]?.[0]).toHaveLength(page === 0 || page === 9 ? 1 : 2);
    }
    expect(seen).toEqual(chain);
  });

  it('a query naming the node fields through fragments gets the same batching and data', async () => {
    const FRAGMENTS = `query($txId: String!, $first: Int) {
      linkedRecord(txId: $txId) { ... on LinkedRecord { chain(first: $first) { edges { node { ...Node } } } } } }
      fragment Node on LinkedRecord { txId ...Bytes confirmation { confirmedBlocks } previous { txId } }
      fragment Bytes on Record { content { text } }`;
    const res = await f.gql<{
      linkedRecord: {
        chain: { edges: { node: { txId: string; content: { text: string }; previous: { txId: string } | null } }[] };
      };
    }>(FRAGMENTS, { txId: chain[0], first: 50 }, key);
    expect(res.errors).toBeUndefined();
    const edges = res.data!.linkedRecord.chain.edges;
    expect(edges.map((e) => e.node.txId)).toEqual(chain.slice(0, 50));
    expect(edges[7]?.node).toMatchObject({ content: { text: 'link 7' }, previous: { txId: chain[6] } });
    // content and confirmation selected only through fragments: still read with the page, once
    expect(counts()).toEqual(ONE_BATCH_EACH);
  });

  it('a page that selects no content or confirmation reads neither', async () => {
    const res = await f.gql<{ linkedRecord: { chain: { edges: { node: { txId: string } }[] } } }>(
      `query($txId: String!) { linkedRecord(txId: $txId) { ... on LinkedRecord { chain(first: 20) { edges { cursor node { txId position } } } } } }`,
      { txId: chain[0] },
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!.linkedRecord.chain.edges).toHaveLength(20);
    expect(counts()).toEqual({
      meta: 1,
      chainPage: 1,
      metaMany: 1,
      contentMany: 0,
      confirmationMany: 0,
      status: 0,
      content: 0,
    });
  });
});
