// Conformance: every answer the devnet node gives on ARC's v1 routes, success and each error
// status it produces, checked against our reading of ARC's OpenAPI document
// (`arc-openapi-contract.ts`: bitcoin-sv/arc pkg/api/arc.yaml at e7efc5b6). Fields, types,
// required-ness and nullability; the HTTP status equals the body's `status` for problems.
import type { Transaction } from '@bsv/sdk';
import { PrivateKey } from '@bsv/sdk';
import type { z } from 'zod';
import { LENIENT_ARC, STRICT_ARC } from '@proofline/devnet';
import type { DevnetNode } from '@proofline/devnet';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import {
  contractViolations,
  errorFields,
  health,
  policyResponse,
  transactionResponse,
  transactionResponses,
  transactionStatus,
} from './arc-openapi-contract';
import { arcCall, coinbaseAt, sdkSpend, startConformanceNode } from './conformance-kit';

jest.setTimeout(30_000);

type Answer = Awaited<ReturnType<typeof arcCall>>;

/** The answer has the HTTP status and a JSON body with no contract violation. */
function expectConforms(answer: Answer, status: number, schema: z.ZodType): void {
  expect({ status: answer.status, violations: contractViolations(schema, answer.body) }).toEqual({
    status,
    violations: [],
  });
  // ARC's document declares `application/json`; problems come as `application/problem+json`
  // (see the todo below), the JSON family either way.
  expect(answer.type).toMatch(/^application\/(problem\+)?json\b/);
}

/** A problem answer: ErrorFields, `status` = the HTTP status, ARC's error type URL. */
function expectProblem(answer: Answer, status: number, txid?: string): void {
  expectConforms(answer, status, errorFields);
  const body = answer.body as { status: number; type: string; txid?: string | null };
  expect(body.status).toBe(status);
  expect(body.type).toBe(`https://bitcoin-sv.github.io/arc/#/errors?id=_${status}`);
  if (txid !== undefined) expect(body.txid).toBe(txid);
}

const rawTxBody = (hex: string) => JSON.stringify({ rawTx: hex });
const json = { 'Content-Type': 'application/json' };

describe("conformance: the devnet node's ARC answers against ARC's OpenAPI document", () => {
  const prefix = uniquePrefix('arccontract');
  const { redis, cleanup } = testRedis(prefix);
  let node: DevnetNode;
  let coins: Transaction;
  let nextVout = 0;
  const coin = () => nextVout++;
  const post = (path: string, body: string, headers: Record<string, string> = json) =>
    arcCall(node, path, { method: 'POST', body, headers });

  beforeAll(async () => {
    node = await startConformanceNode(redis, prefix);
    coins = await sdkSpend(await coinbaseAt(node, 0), 0, { outputs: 20, each: 1_000_000 });
    expectConforms(await post('/v1/tx', rawTxBody(coins.toHexEF())), 200, transactionResponse);
  });
  afterAll(async () => {
    await node.close();
    await cleanup();
  });

  it('POST /v1/tx 200 (SEEN_ON_NETWORK), GET /v1/tx/{txid} 200 before and after MINED, a re-POST of a mined tx: TransactionResponse / TransactionStatus', async () => {
    const tx = await sdkSpend(coins, coin());
    const seen = await post('/v1/tx', rawTxBody(tx.toHexEF()));
    expectConforms(seen, 200, transactionResponse);
    expect(seen.body).toMatchObject({ txid: tx.id('hex'), txStatus: 'SEEN_ON_NETWORK', status: 200 });
    expectConforms(await arcCall(node, `/v1/tx/${tx.id('hex')}`), 200, transactionStatus);

    const block = await node.mineBlock();
    const mined = await arcCall(node, `/v1/tx/${tx.id('hex')}`);
    expectConforms(mined, 200, transactionStatus);
    expect(mined.body).toMatchObject({ txStatus: 'MINED', blockHash: block.hash, blockHeight: block.height });
    expect((mined.body as { merklePath: string }).merklePath).toMatch(/^[0-9a-f]+$/);
    const again = await post('/v1/tx', tx.toHex(), { 'Content-Type': 'text/plain' });
    expectConforms(again, 200, transactionResponse);
    expect(again.body).toMatchObject({ txStatus: 'MINED' });
  });

  it('POST /v1/tx 200 DOUBLE_SPEND_ATTEMPTED with competingTxs', async () => {
    const vout = coin();
    const first = await sdkSpend(coins, vout);
    const second = await sdkSpend(coins, vout, { outputs: 2 });
    expectConforms(await post('/v1/tx', rawTxBody(first.toHexEF())), 200, transactionResponse);
    const ds = await post('/v1/tx', rawTxBody(second.toHexEF()));
    expectConforms(ds, 200, transactionResponse);
    expect(ds.body).toMatchObject({ txStatus: 'DOUBLE_SPEND_ATTEMPTED', competingTxs: [first.id('hex')] });
  });

  it('POST /v1/txs 200: a bare array, successes as TransactionResponse, refusals and malformed entries as ErrorFields with their txid', async () => {
    const good = await sdkSpend(coins, coin());
    const noFee = await sdkSpend(coins, coin(), { satsPerKb: 0 });
    const truncated = good.toHex().slice(0, -8);
    for (const [body, headers] of [
      [JSON.stringify([good, noFee].map((t) => ({ rawTx: t.toHexEF() })).concat({ rawTx: truncated })), json],
      [[good.toHex(), noFee.toHex(), truncated].join('\n'), { 'Content-Type': 'text/plain' }],
    ] as const) {
      const answer = await post('/v1/txs', body, headers);
      expectConforms(answer, 200, transactionResponses);
      const entries = answer.body as { txid: string; txStatus?: string; status: number }[];
      expect(entries).toHaveLength(3);
      const [success, ...failures] = entries;
      expect(contractViolations(transactionResponse, success)).toEqual([]);
      expect(success).toMatchObject({ txid: good.id('hex'), txStatus: 'SEEN_ON_NETWORK' });
      for (const failure of failures) expect(contractViolations(errorFields, failure)).toEqual([]);
      expect(failures.map((f) => f.status)).toEqual([465, 463]);
      expect(failures[0]?.txid).toBe(noFee.id('hex'));
      expect(failures[1]?.txid).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('GET /v1/policy: PolicyResponse (closed Policy and FeeAmount); GET /v1/health: Health', async () => {
    const policy = await arcCall(node, '/v1/policy');
    expectConforms(policy, 200, policyResponse);
    expect(policy.body).toMatchObject({ policy: { miningFee: { satoshis: 1, bytes: 1000 } } });
    const healthAnswer = await arcCall(node, '/v1/health');
    expectConforms(healthAnswer, 200, health);
    expect(healthAnswer.body).toMatchObject({ healthy: true });
  });

  it('400 request problems (ErrorBadRequest), without a txid', async () => {
    const tx = await sdkSpend(coins, coin());
    const body = rawTxBody(tx.toHexEF());
    const answers = [
      await post('/v1/tx', '{"rawTx":'),
      await post('/v1/tx', '{}'),
      await post('/v1/tx', body, { 'Content-Type': 'application/xml' }),
      await post('/v1/tx', body, { ...json, 'X-MaxTimeout': '31' }),
      await post('/v1/tx', body, { ...json, 'X-WaitFor': 'SOON' }),
      await post('/v1/tx', body, { ...json, 'X-CallbackUrl': 'not a url' }),
      await post('/v1/txs', '{"rawTx":"00"}'),
      await post('/v1/txs', '', { 'Content-Type': 'text/plain' }),
      await arcCall(node, '/v1/tx/not-a-txid'),
    ];
    for (const answer of answers) expectProblem(answer, 400, undefined);
    for (const answer of answers) expect((answer.body as { txid: unknown }).txid ?? null).toBeNull();
    // None of them was accepted.
    expect((await arcCall(node, `/v1/tx/${tx.id('hex')}`)).status).toBe(404);
  });

  it('404 for an unknown txid (ErrorNotFound) names the txid', async () => {
    const txid = 'ab'.repeat(32);
    expectProblem(await arcCall(node, `/v1/tx/${txid}`), 404, txid);
  });

  it('461, 462, 463, 464, 465 on POST /v1/tx: ErrorUnlockingScripts, ErrorInputs, ErrorMalformed, ErrorOutputs, ErrorFee with the txid', async () => {
    const wrongSigner = await sdkSpend(coins, coin(), { signer: PrivateKey.fromHex('44'.repeat(32)) });
    const unknownParent = await sdkSpend(await sdkSpend(coins, coin()), 0);
    const dust = await sdkSpend(coins, coin(), { each: 0 });
    const noFee = await sdkSpend(coins, coin(), { satsPerKb: 0 });
    const cases: [Transaction, number][] = [
      [wrongSigner, 461],
      [unknownParent, 462],
      [dust, 464],
      [noFee, 465],
    ];
    for (const [tx, status] of cases)
      expectProblem(await post('/v1/tx', rawTxBody(tx.toHexEF())), status, tx.id('hex'));
    // 463: hex that is not a whole transaction.
    const malformed = await post('/v1/tx', rawTxBody(wrongSigner.toHex().slice(0, -8)));
    expectProblem(malformed, 463);
  });

  it('460 (ErrorTxFormat) with the strict behaviours on: a raw transaction whose parent is not stored (in the same request, or unknown), every raw one without standardFormatSupported; an EF orphan is a 200 SEEN_IN_ORPHAN_MEMPOOL; an unreadable entry is then a 400 for the request', async () => {
    Object.assign(node.strictness, STRICT_ARC);
    try {
      const parent = await sdkSpend(coins, coin());
      const child = await sdkSpend(parent, 0);
      const batch = await post('/v1/txs', JSON.stringify([parent, child].map((t) => ({ rawTx: t.toHex() }))));
      expectConforms(batch, 200, transactionResponses);
      const [accepted, refused] = batch.body as unknown[];
      expect(contractViolations(transactionResponse, accepted)).toEqual([]);
      expect(contractViolations(errorFields, refused)).toEqual([]);
      expect(refused).toMatchObject({ status: 460, txid: child.id('hex') });
      const orphan = await sdkSpend(await sdkSpend(coins, coin(), { each: 10_000 }), 0);
      expectProblem(await post('/v1/tx', orphan.toHex(), { 'Content-Type': 'text/plain' }), 460, orphan.id('hex'));
      // The same transaction in Extended Format: an orphan until its parent arrives.
      const held = await post('/v1/tx', rawTxBody(orphan.toHexEF()), { ...json, 'X-MaxTimeout': '1' });
      expectConforms(held, 200, transactionResponse);
      expect(held.body).toMatchObject({ txStatus: 'SEEN_IN_ORPHAN_MEMPOOL' });
      node.strictness.standardFormatSupported = false;
      const raw = await sdkSpend(coins, coin());
      expectProblem(await post('/v1/tx', rawTxBody(raw.toHex())), 460, raw.id('hex'));
      expectConforms(await post('/v1/tx', rawTxBody(raw.toHexEF())), 200, transactionResponse);
      const unreadable = await post('/v1/txs', JSON.stringify([{ rawTx: raw.toHexEF() }, { rawTx: '00' }]));
      expectProblem(unreadable, 400);
      expect((unreadable.body as { txid: unknown }).txid).toBeNull();
    } finally {
      Object.assign(node.strictness, LENIENT_ARC);
    }
  });

  it('401 without the Bearer key (NotAuthorized declares no body; ours is still ErrorFields)', async () => {
    const answer = await arcCall(node, '/v1/policy', { headers: { Authorization: 'Bearer wrong' } });
    expectProblem(answer, 401, undefined);
  });

  it.todo(
    "problem answers' Content-Type: ARC's document declares application/json for every error response (and ARC's echo handler sends it); the node sends application/problem+json, the project's rule for every error answer. The sdk reads both (its FetchHttpClient falls back to JSON.parse); Proofline's ArcClient ignores the content type",
  );
  it.todo(
    '473 (ErrorCumulativeFees) and 474 (oversize): the node has no cumulative-fee validation and no size policy check, so it never answers them',
  );
});
