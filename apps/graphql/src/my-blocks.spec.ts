import { eventually } from '@proofline/shared-testing';
import type { MyBlock as PageBlock } from '../pages/explorer';
import { startGraphQL, writeChain } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

// The devnet node mines only when the spec says so (BLOCK_INTERVAL_MS of an hour), so which
// records share a block is known; the real publisher and confirmation workers store the proofs.
jest.setTimeout(120_000);

interface MyBlock extends PageBlock {
  records: { totalCount: number; edges: { cursor: string; node: { __typename: string; txId: string } }[] };
}
interface Page {
  myBlocks: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
    edges: { cursor: string; node: MyBlock }[];
  } | null;
}

const BLOCK_FIELDS = `hash height time recordCount confirmations
  records(first: 50) { totalCount edges { cursor node { __typename txId ... on LinkedRecord { chainId position } } } }`;

describe("GraphQL myBlocks / myBlock: the blocks holding the key's tenant's records", () => {
  let f: GraphQLFixture;
  let acme = '';
  let zeta = '';
  let empty = '';
  /** acme's records in the first block (an independent record and a two-version chain), then in the second. */
  let firstAcme: string[] = [];
  let secondAcme = '';
  let zetaTx = '';

  async function mined(txIds: readonly string[], blocks: number): Promise<void> {
    await eventually(
      async () => (await f.deps.records.confirmationMany(txIds)).every((c) => (c?.confirmedBlocks ?? 0) >= blocks),
      30_000,
    );
  }
  async function published(txIds: readonly string[]): Promise<void> {
    await eventually(async () => {
      const metas = await f.deps.records.metaMany(txIds);
      return metas.every((m) => m?.state === 'published');
    }, 30_000);
  }

  beforeAll(async () => {
    f = await startGraphQL({ BLOCK_INTERVAL_MS: '3600000' }, undefined, { publish: true, fund: 40 });
    acme = (await f.seedKey({ permissions: ['Verifier_User'], tenant: 'acme' })).rawKey;
    zeta = (await f.seedKey({ permissions: ['Issuer_Admin'], tenant: 'zeta' })).rawKey;
    empty = (await f.seedKey({ permissions: ['Verifier_User'], tenant: 'nobody' })).rawKey;
    await f.startChain();
    const independent = (
      await f.writer.writeIndependent({ tenant: 'acme' }, { body: Buffer.from('invoice 1'), encode: undefined })
    ).txId;
    const chain = await writeChain(f.writer, 2, { tenant: 'acme', encode: 'Base64' });
    zetaTx = (await f.writer.writeIndependent({ tenant: 'zeta' }, { body: Buffer.from('zeta'), encode: 'SHA256' }))
      .txId;
    firstAcme = [independent, ...chain];
    await published([...firstAcme, zetaTx]);
    await f.dev.node.mineBlock();
    await mined([...firstAcme, zetaTx], 1);
    secondAcme = (
      await f.writer.writeIndependent({ tenant: 'acme' }, { body: Buffer.from('invoice 2'), encode: undefined })
    ).txId;
    await published([secondAcme]);
    await f.dev.node.mineBlock();
    await mined([secondAcme], 1);
  });
  afterAll(() => f?.close());

  const page = (args: string, key: string) =>
    f.gql<Page>(
      `{ myBlocks${args ? `(${args})` : ''} { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        edges { cursor node { ${BLOCK_FIELDS} } } } }`,
      {},
      key,
    );

  it("lists the tenant's blocks newest first with its count, confirmations and records; each record's own block", async () => {
    const res = await page('', acme);
    expect(res.errors).toBeUndefined();
    const conn = res.data!.myBlocks!;
    expect(conn.totalCount).toBe(2);
    expect(conn.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    const [newer, older] = conn.edges.map((e) => e.node) as [MyBlock, MyBlock];
    const [first] = await f.deps.records.confirmationMany([firstAcme[0] as string]);
    const [second] = await f.deps.records.confirmationMany([secondAcme]);
    expect(newer).toMatchObject({
      hash: second!.blockHash,
      time: second!.blockTimestamp,
      recordCount: 1,
      confirmations: second!.confirmedBlocks,
    });
    expect(older).toMatchObject({
      hash: first!.blockHash,
      height: newer.height - 1,
      time: first!.blockTimestamp,
      recordCount: 3,
      confirmations: first!.confirmedBlocks,
    });
    expect(newer.confirmations).toBe(1);
    expect(older.confirmations).toBe(2);
    expect(newer.records.edges.map((e) => e.node.txId)).toEqual([secondAcme]);
    expect(older.records.totalCount).toBe(3);
    expect(older.records.edges.map((e) => e.node.txId).sort()).toEqual([...firstAcme].sort());
    expect(older.records.edges.find((e) => e.node.txId === firstAcme[2])?.node).toMatchObject({
      __typename: 'LinkedRecord',
      chainId: firstAcme[1],
      position: 1,
    });
    expect(older.records.edges.find((e) => e.node.txId === firstAcme[0])?.node.__typename).toBe('IndependentRecord');
    // The same block as the public block query has it.
    const block = await f.gql<{ block: { height: number; time: string } }>(
      `{ block(hash: "${older.hash}") { ... on Block { height time } } }`,
      {},
      acme,
    );
    expect(block.data?.block).toEqual({ height: older.height, time: older.time });
  });

  it("another tenant's key never sees these blocks or records; a tenant without records has none", async () => {
    const theirs = (await page('', zeta)).data!.myBlocks!;
    expect(theirs.totalCount).toBe(1);
    const [only] = theirs.edges.map((e) => e.node);
    expect(only).toMatchObject({ recordCount: 1, records: { totalCount: 1 } });
    expect(only!.records.edges.map((e) => e.node.txId)).toEqual([zetaTx]);
    const acmeBlocks = (await page('', acme)).data!.myBlocks!.edges.map((e) => e.node.hash);
    expect(acmeBlocks).toContain(only!.hash);

    // acme's newer block holds none of zeta's records: not one of zeta's blocks.
    const refused = await f.gql<{ myBlock: { __typename: string; code?: string } }>(
      `{ myBlock(hash: "${acmeBlocks[0]}") { __typename ... on NotFoundError { code message } ... on MyBlock { recordCount } } }`,
      {},
      zeta,
    );
    expect(refused.data?.myBlock).toMatchObject({ __typename: 'NotFoundError', code: 'BLOCK_NOT_FOUND' });

    const none = (await page('', empty)).data!.myBlocks!;
    expect(none).toEqual({
      totalCount: 0,
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      edges: [],
    });
    // Nothing of acme's in any answer to the other keys.
    const answers = JSON.stringify([theirs, none, refused]);
    for (const txId of [...firstAcme, secondAcme]) expect(answers).not.toContain(txId);
  });

  it('myBlock: one block by hash (either case) with the tenant’s records, paged', async () => {
    const older = (await page('', acme)).data!.myBlocks!.edges[1]!.node;
    const one = await f.gql<{
      myBlock: MyBlock & {
        __typename: string;
        block: { txCount: number };
        records: { pageInfo: { hasNextPage: boolean; endCursor: string } };
      };
    }>(
      `{ myBlock(hash: "${older.hash.toUpperCase()}") { __typename ... on MyBlock { hash recordCount block { txCount }
        records(first: 2) { totalCount pageInfo { hasNextPage endCursor } edges { node { txId } } } } } }`,
      {},
      acme,
    );
    expect(one.errors).toBeUndefined();
    const b = one.data!.myBlock;
    expect(b).toMatchObject({ __typename: 'MyBlock', hash: older.hash, recordCount: 3, block: { txCount: 4 } });
    expect(b.records.totalCount).toBe(3);
    expect(b.records.pageInfo.hasNextPage).toBe(true);
    const rest = await f.gql<{ myBlock: { records: { edges: { node: { txId: string } }[] } } }>(
      `{ myBlock(hash: "${older.hash}") { ... on MyBlock { records(after: "${b.records.pageInfo.endCursor}") { edges { node { txId } } } } } }`,
      {},
      acme,
    );
    expect([...b.records.edges, ...rest.data!.myBlock.records.edges].map((e) => e.node.txId).sort()).toEqual(
      [...firstAcme].sort(),
    );
  });

  it('pages as a Relay connection both ways, on cursors of its own', async () => {
    const one = (await page('first: 1', acme)).data!.myBlocks!;
    expect(one.edges.map((e) => e.node.recordCount)).toEqual([1]);
    expect(one.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const next = (await page(`first: 1, after: "${one.pageInfo.endCursor}"`, acme)).data!.myBlocks!;
    expect(next.edges.map((e) => e.node.recordCount)).toEqual([3]);
    expect(next.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const last = (await page('last: 1', acme)).data!.myBlocks!;
    expect(last.edges.map((e) => e.cursor)).toEqual(next.edges.map((e) => e.cursor));
    expect(last.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const before = (await page(`last: 5, before: "${last.pageInfo.startCursor}"`, acme)).data!.myBlocks!;
    expect(before.edges.map((e) => e.cursor)).toEqual(one.edges.map((e) => e.cursor));

    // A chain cursor, a block-transaction cursor, garbage: CURSOR_INVALID; both first and last: PAGE_SIZE_INVALID.
    for (const cursor of [
      Buffer.from('chain:0').toString('base64url'),
      Buffer.from('tx:1').toString('base64url'),
      'x',
    ]) {
      const bad = await page(`after: "${cursor}"`, acme);
      expect(bad.errors?.[0]?.extensions).toEqual({ code: 'CURSOR_INVALID', status: 400 });
      expect(bad.data?.myBlocks).toBeNull();
    }
    const records = await f.gql(
      `{ myBlocks { edges { node { records(after: "${one.pageInfo.endCursor}") { totalCount } } } } }`,
      {},
      acme,
    );
    expect(records.errors?.[0]?.extensions).toEqual({ code: 'CURSOR_INVALID', status: 400 });
    expect((await page('first: 1, last: 1', acme)).errors?.[0]?.extensions).toEqual({
      code: 'PAGE_SIZE_INVALID',
      status: 400,
    });
    expect((await page('first: 0', acme)).errors?.[0]?.extensions?.code).toBe('PAGE_SIZE_INVALID');
    const hash = await f.gql(`{ myBlock(hash: "nope") { __typename } }`, {}, acme);
    expect(hash.errors?.[0]?.extensions).toEqual({ code: 'BLOCK_HASH_PARAM_INVALID', status: 400 });
  });

  it('a reorg of the last block: the tenant’s blocks follow the records’ proofs into the new block', async () => {
    const before = (await page('', acme)).data!.myBlocks!.edges.map((e) => e.node);
    const reorg = await f.dev.node.reorgLastBlock();
    expect(reorg.oldHash).toBe(before[0]!.hash);
    await eventually(async () => {
      const [c] = await f.deps.records.confirmationMany([secondAcme]);
      return c?.blockHash === reorg.newHash;
    }, 30_000);
    const after = (await page('', acme)).data!.myBlocks!;
    expect(after.totalCount).toBe(2);
    expect(after.edges.map((e) => [e.node.hash, e.node.height, e.node.recordCount])).toEqual([
      [reorg.newHash, before[0]!.height, 1],
      [before[1]!.hash, before[1]!.height, 3],
    ]);
    expect(after.edges[0]!.node.records.edges.map((e) => e.node.txId)).toEqual([secondAcme]);
    const gone = await f.gql<{ myBlock: { __typename: string; code?: string } }>(
      `{ myBlock(hash: "${reorg.oldHash}") { __typename ... on NotFoundError { code } } }`,
      {},
      acme,
    );
    expect(gone.data?.myBlock).toEqual({ __typename: 'NotFoundError', code: 'BLOCK_NOT_FOUND' });
  });

  it('needs a valid key, and the complexity limit refuses a full page of blocks with full pages of records', async () => {
    const anonymous = await f.gql<Page>(`{ myBlocks { totalCount } }`);
    expect(anonymous.errors?.[0]?.extensions).toEqual({ code: 'API_KEY_MISSING', status: 401 });
    expect(anonymous.data?.myBlocks).toBeNull();
    const spy = jest.spyOn(f.deps.chain, 'ownerBlocks');
    const costly = await f.gql(
      `{ myBlocks(first: 1000) { edges { node { records(first: 1000) { edges { node { txId content { base64 } } } } } } } }`,
      {},
      acme,
    );
    expect(costly.errors?.[0]?.extensions).toEqual({ code: 'QUERY_TOO_COMPLEX', status: 400 });
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    // A page of 50 blocks with 20 records each fits.
    const fits = await f.gql(
      `{ myBlocks(first: 50) { edges { node { hash records(first: 20) { edges { node { txId } } } } } } }`,
      {},
      acme,
    );
    expect(fits.errors).toBeUndefined();
  });
});
