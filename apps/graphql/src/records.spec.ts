import { createHash } from 'node:crypto';
import type { Confirmation } from '@proofline/records-domain';
import { eventually } from '@proofline/shared-testing';
import { startGraphQL, writeChain } from './testing/fixture';
import type { GraphQLFixture } from './testing/fixture';

const sha256d = (b: Buffer) => createHash('sha256').update(createHash('sha256').update(b).digest()).digest();

type Proof = Confirmation['merkleProof'];

/** Independent TSC check: fold the nodes from the leaf and compare with the header's Merkle root. */
function verifyProof(txId: string, blockHash: string, p: Proof): void {
  const header = Buffer.from(p.target, 'hex');
  expect(header).toHaveLength(80);
  expect(Buffer.from(sha256d(header)).reverse().toString('hex')).toBe(blockHash);
  expect(p).toMatchObject({ txOrId: txId, targetType: 'header', proofType: 'branch', composite: false });
  let running = Buffer.from(txId, 'hex').reverse();
  let index = p.index;
  for (const node of p.nodes) {
    const sibling = node === '*' ? running : Buffer.from(node, 'hex').reverse();
    running = index % 2 === 1 ? sha256d(Buffer.concat([sibling, running])) : sha256d(Buffer.concat([running, sibling]));
    index = Math.floor(index / 2);
  }
  expect(running.equals(header.subarray(36, 68))).toBe(true);
}

const RECORD = `
  txId kind contentType encoding byteLength publication
  content { text base64 byteLength }
  confirmation { confirmedBlocks blockHash blockTimestamp merkleProof { index txOrId target nodes targetType proofType composite } }
`;

// The devnet node, its funding split and the workers take a few seconds to start on a busy machine.
jest.setTimeout(60_000);

describe('GraphQL records and blocks over a devnet chain built through the real write path', () => {
  let f: GraphQLFixture;
  let key = '';
  let chain: string[] = [];
  let independent = '';

  beforeAll(async () => {
    f = await startGraphQL({}, undefined, { publish: true });
    key = (await f.seedKey({ permissions: ['Issuer_User'] })).rawKey;
    await f.startChain();
    chain = await writeChain(f.writer, 5, { encode: 'Base64' });
    independent = (
      await f.writer.writeIndependent(
        { tenant: 'default' },
        { body: Buffer.from([0xff, 0x00, 0x10]), encode: undefined },
      )
    ).txId;
    // every record mined (with its proof) and one more block on top
    await eventually(
      async () =>
        (await f.deps.records.confirmationMany([...chain, independent])).every(
          (c) => c !== null && c.confirmedBlocks >= 2,
        ),
      20_000,
    );
  });
  afterAll(() => f.close());

  it('linkedRecord: fields, content as text and base64, confirmation with a valid TSC proof, previous and next', async () => {
    const res = await f.gql<{
      linkedRecord: Record<string, unknown> & {
        confirmation: { blockHash: string; merkleProof: Proof; confirmedBlocks: number };
      };
    }>(
      `query($txId: String!) { linkedRecord(txId: $txId) { __typename ... on LinkedRecord { ${RECORD} chainId position updatable
        previous { txId position } next { txId position } } } }`,
      { txId: chain[2]?.toUpperCase() },
      key,
    );
    expect(res.errors).toBeUndefined();
    const r = res.data?.linkedRecord;
    expect(r).toMatchObject({
      __typename: 'LinkedRecord',
      txId: chain[2],
      kind: 'UPDATE',
      contentType: 'text/plain; event-encoded=Base64',
      encoding: ['Base64'],
      publication: 'PUBLISHED',
      content: {
        text: Buffer.from('version 2').toString('base64'),
        base64: Buffer.from(Buffer.from('version 2').toString('base64')).toString('base64'),
      },
      chainId: chain[0],
      position: 2,
      updatable: false,
      previous: { txId: chain[1], position: 1 },
      next: { txId: chain[3], position: 3 },
    });
    expect(r?.confirmation.confirmedBlocks).toBeGreaterThanOrEqual(2);
    verifyProof(chain[2] ?? '', r?.confirmation.blockHash ?? '', r!.confirmation.merkleProof);

    // the same confirmation REST status returns (one use case)
    const status = await f.deps.records.status('linked', chain[2]);
    expect(r?.confirmation).toMatchObject({
      blockHash: status.confirmation?.blockHash,
      blockTimestamp: status.confirmation?.blockTimestamp,
    });

    const end = await f.gql<{ linkedRecord: { updatable: boolean; next: null; previous: { txId: string } } }>(
      `{ linkedRecord(txId: "${chain[4]}") { ... on LinkedRecord { updatable next { txId } previous { txId } } } }`,
      {},
      key,
    );
    expect(end.data?.linkedRecord).toEqual({ updatable: true, next: null, previous: { txId: chain[3] } });
  });

  it('record: an independent record; binary content has no text', async () => {
    const res = await f.gql(
      `{ record(txId: "${independent}") { __typename ... on IndependentRecord { ${RECORD} } } }`,
      {},
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.['record']).toMatchObject({
      __typename: 'IndependentRecord',
      kind: 'INDEPENDENT',
      contentType: 'application/octet-stream',
      encoding: [],
      content: { text: null, base64: Buffer.from([0xff, 0x00, 0x10]).toString('base64'), byteLength: 3 },
    });
  });

  it('receipt: the same receipt as REST, batched over a chain page', async () => {
    const res = await f.gql<{
      linkedRecord: {
        chain: {
          edges: {
            node: {
              txId: string;
              receipt: Record<string, unknown> & { beef: string; merkleProof: Proof; blockHash: string };
            };
          }[];
        };
      };
    }>(
      `query($txId: String!) { linkedRecord(txId: $txId) { ... on LinkedRecord { chain(first: 5) { edges { node { txId receipt {
        version txId family prevTxId rawTx encoding contentType blockHeader blockHash blockHeight beef
        merkleProof { index txOrId target nodes targetType proofType composite } } } } } } } }`,
      { txId: chain[0] },
      key,
    );
    expect(res.errors).toBeUndefined();
    const edges = res.data?.linkedRecord.chain.edges ?? [];
    expect(edges).toHaveLength(5);
    for (const [i, { node }] of edges.entries()) {
      const rest = await f.deps.receipts.receipt('linked', node.txId);
      expect(node.receipt).toEqual({ ...rest, encoding: ['Base64'], prevTxId: i === 0 ? null : chain[i - 1] });
      verifyProof(node.txId, node.receipt.blockHash, node.receipt.merkleProof);
      expect(node.receipt.beef.startsWith('01010101')).toBe(true);
    }
  });

  it('the chain as a Relay connection, forward and backward, from any record', async () => {
    type Page = {
      linkedRecord: {
        cursor: string;
        chain: {
          totalCount: number;
          pageInfo: Record<string, unknown>;
          edges: { cursor: string; node: { txId: string; position: number } }[];
        };
      };
    };
    const page = (args: string, txId = chain[3]) =>
      f.gql<Page>(
        `{ linkedRecord(txId: "${txId}") { ... on LinkedRecord { cursor chain(${args}) { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
          edges { cursor node { txId position } } } } } }`,
        {},
        key,
      );
    const first = await page('first: 2');
    expect(first.errors).toBeUndefined();
    const c1 = first.data!.linkedRecord.chain;
    expect(c1.totalCount).toBe(5);
    expect(c1.edges.map((e) => e.node.txId)).toEqual(chain.slice(0, 2));
    expect(c1.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const second = (await page(`first: 2, after: "${String(c1.pageInfo['endCursor'])}"`)).data!.linkedRecord.chain;
    expect(second.edges.map((e) => e.node.position)).toEqual([2, 3]);
    const third = (await page(`first: 2, after: "${String(second.pageInfo['endCursor'])}"`)).data!.linkedRecord.chain;
    expect(third.edges.map((e) => e.node.txId)).toEqual([chain[4]]);
    expect(third.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

    // backward from the end
    const last = (await page('last: 2')).data!.linkedRecord.chain;
    expect(last.edges.map((e) => e.node.position)).toEqual([3, 4]);
    const before = (await page(`last: 2, before: "${String(last.pageInfo['startCursor'])}"`)).data!.linkedRecord.chain;
    expect(before.edges.map((e) => e.node.position)).toEqual([1, 2]);
    expect(before.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });

    // from this record: its own cursor
    const own = (await page('first: 1')).data!.linkedRecord.cursor;
    const later = (await page(`first: 10, after: "${own}"`)).data!.linkedRecord.chain;
    expect(later.edges.map((e) => e.node.txId)).toEqual([chain[4]]);
    const earlier = (await page(`last: 10, before: "${own}"`)).data!.linkedRecord.chain;
    expect(earlier.edges.map((e) => e.node.txId)).toEqual(chain.slice(0, 3));
  });

  it('block by height and by hash, with header fields and its transactions as a connection; tip', async () => {
    const status = await f.deps.records.status('linked', chain[0]);
    const hash = status.confirmation?.blockHash ?? '';
    const byHash = await f.gql<{
      block: Record<string, unknown> & {
        height: number;
        header: string;
        transactions: {
          totalCount: number;
          edges: {
            node: {
              txId: string;
              index: number;
              coinbase: boolean;
              record: { txId: string; __typename: string } | null;
            };
          }[];
        };
      };
    }>(
      `{ block(hash: "${hash.toUpperCase()}") { __typename ... on Block { hash height version previousHash merkleRoot time bits nonce header txCount
        previous { hash } transactions(first: 100) { totalCount edges { cursor node { txId index coinbase record { __typename txId } } } } } } }`,
      {},
      key,
    );
    expect(byHash.errors).toBeUndefined();
    const b = byHash.data!.block;
    expect(b).toMatchObject({ __typename: 'Block', hash, version: 0x20000000, bits: '207fffff' });
    expect(
      Buffer.from(sha256d(Buffer.from(b.header, 'hex')))
        .reverse()
        .toString('hex'),
    ).toBe(hash);
    const txs = b.transactions.edges.map((e) => e.node);
    // Over ARC a block lists the transactions this service proved in it (block order), each a record.
    expect(txs.length).toBeGreaterThanOrEqual(1);
    expect(txs.every((t) => t.coinbase === false && t.record?.txId === t.txId)).toBe(true);
    expect(txs.find((t) => t.txId === chain[0])?.record).toEqual({ __typename: 'LinkedRecord', txId: chain[0] });
    expect(b.transactions.totalCount).toBe(b['txCount']);

    const byHeight = await f.gql<{ block: { hash: string } }>(
      `{ block(height: ${b.height}) { ... on Block { hash } } }`,
      {},
      key,
    );
    expect(byHeight.data?.block.hash).toBe(hash);

    const tip = await f.gql<{ tip: { height: number; hash: string; block: { hash: string; height: number } } }>(
      '{ tip { hash height time block { hash height } } }',
      {},
      key,
    );
    expect(tip.data?.tip.height).toBeGreaterThanOrEqual(b.height + 1);
    expect(tip.data?.tip.block.hash).toBe(tip.data?.tip.hash);
  });

  it('expected failures are typed results with the REST codes', async () => {
    const unknown = 'ab'.repeat(32);
    const res = await f.gql(
      `{ a: linkedRecord(txId: "${unknown}") { __typename ... on UserError { code message } }
         b: linkedRecord(txId: "${independent}") { __typename ... on UserError { code } }
         c: record(txId: "${chain[0]}") { __typename ... on UserError { code } }
         d: block(height: 100000) { __typename ... on UserError { code message } }
         e: block(hash: "${unknown}") { __typename ... on UserError { code } } }`,
      {},
      key,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({
      a: { __typename: 'NotFoundError', code: 'TX_NOT_FOUND', message: `No record with txId ${unknown}.` },
      b: { __typename: 'InvalidArgumentError', code: 'TX_INCORRECT_EVENT_TRANSACTION_TYPE' },
      c: { __typename: 'InvalidArgumentError', code: 'TX_INCORRECT_EVENT_TRANSACTION_TYPE' },
      d: { __typename: 'NotFoundError', code: 'BLOCK_NOT_FOUND', message: 'No block at height 100000.' },
      e: { __typename: 'NotFoundError', code: 'BLOCK_NOT_FOUND' },
    });
  });

  it.each([
    ['a malformed txId', '{ linkedRecord(txId: "xyz") { __typename } }', 'TX_ID_PARAM_INVALID'],
    ['a 63-character txId', `{ record(txId: "${'a'.repeat(63)}") { __typename } }`, 'TX_ID_PARAM_INVALID'],
    ['a malformed block hash', '{ block(hash: "zz") { __typename } }', 'BLOCK_HASH_PARAM_INVALID'],
    ['a negative height', '{ block(height: -1) { __typename } }', 'BLOCK_HEIGHT_PARAM_INVALID'],
    [
      'hash and height together',
      `{ block(hash: "${'a'.repeat(64)}", height: 1) { __typename } }`,
      'BLOCK_SELECTOR_INVALID',
    ],
    ['neither hash nor height', '{ block { __typename } }', 'BLOCK_SELECTOR_INVALID'],
  ])('%s is a GraphQL error with a stable code', async (_name, query, code) => {
    const res = await f.gql(query, {}, key);
    expect(res.errors?.[0]?.extensions).toEqual({ code, status: 400 });
    expect(res.errors?.[0]?.message).not.toMatch(/zod|stack|at .*\.ts/i);
  });

  it.each([
    ['first: 0', 'PAGE_SIZE_INVALID'],
    ['first: 1001', 'PAGE_SIZE_INVALID'],
    ['last: -3', 'PAGE_SIZE_INVALID'],
    ['first: 1, last: 1', 'PAGE_SIZE_INVALID'],
    ['after: "garbage"', 'CURSOR_INVALID'],
    [`before: "${Buffer.from('tx:1').toString('base64url')}"`, 'CURSOR_INVALID'],
    [`after: "${Buffer.from('chain:-1').toString('base64url')}"`, 'CURSOR_INVALID'],
  ])('chain(%s) is refused with %s', async (args, code) => {
    const res = await f.gql(
      `{ linkedRecord(txId: "${chain[0]}") { ... on LinkedRecord { txId chain(${args}) { totalCount } } } }`,
      {},
      key,
    );
    // nested arguments are validated when the root field's cost is computed, before it resolves
    expect(res.errors?.[0]).toMatchObject({ extensions: { code, status: 400 }, path: ['linkedRecord'] });
    expect(res.errors?.[0]?.message).toMatch(/^(first|last|after|before) /);
    expect(res.data).toEqual({ linkedRecord: null });
  });

  it('block transactions refuse chain cursors', async () => {
    const cursor = Buffer.from('chain:0').toString('base64url');
    const res = await f.gql(
      `{ block(height: 0) { ... on Block { transactions(after: "${cursor}") { totalCount } } } }`,
      {},
      key,
    );
    expect(res.errors?.[0]?.extensions).toEqual({ code: 'CURSOR_INVALID', status: 400 });
  });

  it('the complexity and depth limits reject abusive queries before any resolver runs', async () => {
    const spy = jest.spyOn(f.deps.records, 'meta');
    const nested = await f.gql(
      `{ linkedRecord(txId: "${chain[0]}") { ... on LinkedRecord { chain(first: 1000) { edges { node { chain(first: 1000) { edges { node { txId content { base64 } } } } } } } } } }`,
      {},
      key,
    );
    expect(nested.errors?.[0]?.extensions).toEqual({ code: 'QUERY_TOO_COMPLEX', status: 400 });
    expect(nested.errors?.[0]?.message).toMatch(/complexity is \d+; at most 50000/);
    expect(nested.data).toEqual({ linkedRecord: null });

    const deep = await f.gql(
      `{ linkedRecord(txId: "${chain[0]}") { ... on LinkedRecord { next { next { next { next { next { next { next { next { next { next { txId } } } } } } } } } } } } }`,
      {},
      key,
    );
    expect(deep.errors?.[0]?.extensions).toEqual({ code: 'QUERY_TOO_DEEP', status: 400 });
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();

    // a full page of 1000 records with content and proofs is within budget
    const full = await f.gql(
      `{ linkedRecord(txId: "${chain[0]}") { ... on LinkedRecord { chain(first: 1000) { edges { cursor node { ${RECORD} updatable } } } } } }`,
      {},
      key,
    );
    expect(full.errors).toBeUndefined();
  });
});

describe('GraphQL with the navigate feature off', () => {
  let f: GraphQLFixture;
  afterAll(() => f.close());

  it('answers FEATURE_NOT_ENABLED on chain, previous and next, as REST navigate does', async () => {
    f = await startGraphQL({ FEATURES: 'linked,verify,unencoded' });
    const key = (await f.seedKey({ permissions: ['Verifier_User'] })).rawKey;
    const [a] = await writeChain(f.writer, 2);
    const res = await f.gql(
      `{ linkedRecord(txId: "${a}") { ... on LinkedRecord { txId next { txId } chain(first: 1) { totalCount } } } }`,
      {},
      key,
    );
    expect(res.data).toEqual({ linkedRecord: { txId: a, next: null, chain: null } });
    expect(res.errors?.map((e) => [e.path?.join('.'), e.extensions?.code, e.extensions?.status])).toEqual(
      expect.arrayContaining([
        ['linkedRecord.next', 'FEATURE_NOT_ENABLED', 403],
        ['linkedRecord.chain', 'FEATURE_NOT_ENABLED', 403],
      ]),
    );
  });
});
