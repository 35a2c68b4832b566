/* eslint-disable @typescript-eslint/no-explicit-any */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { LockingScript, P2PKH, Transaction } from '@bsv/sdk';
import { Redis } from 'ioredis';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import { blockHash, headerFromFields } from '@proofline/chain-domain';
import { eventually, freePort, testRedis, uniquePrefix } from '@proofline/shared-testing';
import { COINBASE_MATURITY, Callbacker, DevnetBlockProducer, devnetKeys } from '../index';
import type { DevnetNode } from '../index';
import {
  bumpRoot,
  callbackReceiver,
  callbackReceiverOn,
  coinbaseTx,
  getJson,
  otherKey,
  postTx,
  spend,
  split,
  startTestNode,
  testKey,
  testScriptHex,
} from './node-test-kit';

// The root jest run (all projects) ignores the preset's testTimeout: set it here, the machine is shared.
jest.setTimeout(30_000);

const json = (hex: string) => JSON.stringify({ rawTx: hex });

describe('devnet node: ARC v1 over HTTP', () => {
  const prefix = uniquePrefix('node');
  const { redis, cleanup } = testRedis(prefix);
  let node: DevnetNode;
  let base: string;
  /** Outputs of a split of the genesis coinbase: 20 spendable coins of 100 000 sat. */
  let coins: Transaction;
  let coinIndex = 0;
  const nextCoin = () => coinIndex++;

  beforeAll(async () => {
    node = await startTestNode(redis, prefix);
    base = node.url;
    coins = await split(await coinbaseTx(base, 0), 48);
    const r = await postTx(base, json(coins.toHexEF()));
    expect(r).toMatchObject({ status: 200, body: { txid: coins.id('hex'), txStatus: 'SEEN_ON_NETWORK' } });
  });
  afterAll(async () => {
    await node.close();
    await cleanup();
  });

  it('mines COINBASE_MATURITY blocks on an empty chain, coinbases paying the given script', async () => {
    const info = await getJson(`${base}/chain/info`);
    expect(info.status).toBe(200);
    expect(info.body.blocks).toBeGreaterThanOrEqual(COINBASE_MATURITY - 1);
    const cb = await coinbaseTx(base, 0);
    expect(cb.outputs[0]!.lockingScript.toHex()).toBe(testScriptHex);
    expect((await getJson(`${base}/block/height/999/coinbase`)).status).toBe(404);
    expect((await getJson(`${base}/liveness`)).body).toBe('Healthy');
  });

  it('accepts raw (text/plain, octet-stream) and EF (json) transactions; a re-POST answers the stored status', async () => {
    const a = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    const b = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    const c = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    expect(await postTx(base, a.toHex(), 'text/plain')).toMatchObject({
      status: 200,
      body: { txid: a.id('hex'), txStatus: 'SEEN_ON_NETWORK', status: 200, title: 'OK', merklePath: '' },
    });
    expect(await postTx(base, Buffer.from(b.toBinary()), 'application/octet-stream')).toMatchObject({
      status: 200,
      body: { txStatus: 'SEEN_ON_NETWORK' },
    });
    expect(await postTx(base, Buffer.from(c.toEF()), 'application/octet-stream')).toMatchObject({
      status: 200,
      body: { txid: c.id('hex'), txStatus: 'SEEN_ON_NETWORK' },
    });
    expect(await postTx(base, json(a.toHexEF()))).toMatchObject({
      status: 200,
      body: { txid: a.id('hex'), txStatus: 'SEEN_ON_NETWORK' },
    });
    const k = devnetKeys(prefix);
    expect(await redis.hget(k.raw, c.id('hex'))).toBe(c.toHex()); // stored stripped of EF data
    expect(await redis.hget(k.spent, `${coins.id('hex')}:2`)).toBe(c.id('hex'));
    // Two inputs (each signature commits to the other input): both run through the interpreter.
    const two = new Transaction();
    for (const vout of [nextCoin(), nextCoin()])
      two.addInput({
        sourceTransaction: coins,
        sourceOutputIndex: vout,
        unlockingScriptTemplate: new P2PKH().unlock(testKey),
      });
    two.addOutput({ satoshis: 199_000, lockingScript: LockingScript.fromHex(testScriptHex) });
    await two.sign();
    expect(await postTx(base, json(two.toHexEF()))).toMatchObject({
      status: 200,
      body: { txid: two.id('hex'), txStatus: 'SEEN_ON_NETWORK' },
    });
    const twoBad = new Transaction();
    twoBad.addInput({
      sourceTransaction: coins,
      sourceOutputIndex: nextCoin(),
      unlockingScriptTemplate: new P2PKH().unlock(testKey),
    });
    twoBad.addInput({
      sourceTransaction: coins,
      sourceOutputIndex: nextCoin(),
      unlockingScriptTemplate: new P2PKH().unlock(otherKey),
    });
    twoBad.addOutput({ satoshis: 199_000, lockingScript: LockingScript.fromHex(testScriptHex) });
    await twoBad.sign();
    const r = await postTx(base, json(twoBad.toHexEF()));
    expect(r).toMatchObject({ status: 461 });
    expect(r.body.detail).toMatch(/^input 1: /);
    const got = await getJson(`${base}/v1/tx/${a.id('hex')}`);
    expect(got).toMatchObject({
      status: 200,
      body: { txid: a.id('hex'), txStatus: 'SEEN_ON_NETWORK', blockHash: '', blockHeight: 0 },
    });
    expect(typeof got.body.timestamp).toBe('string');
  });

  it('refuses a bad signature (461), an unknown input and an immature coinbase (462), a low fee (465), bad outputs (464), garbage (463)', async () => {
    const k = devnetKeys(prefix);
    const badSig = await spend(coins, nextCoin(), [{ satoshis: 99_000 }], otherKey);
    const r461 = await postTx(base, json(badSig.toHexEF()));
    expect(r461).toMatchObject({
      status: 461,
      body: {
        status: 461,
        txid: badSig.id('hex'),
        title: 'Invalid unlocking scripts',
        errorCode: 'ARC_UNLOCKING_SCRIPTS',
      },
    });
    expect(r461.type).toContain('application/problem+json');
    expect(r461.body.type).toContain('461');
    // The same coin is still spendable: nothing was written.
    expect(await redis.hexists(k.raw, badSig.id('hex'))).toBe(0);

    const fakeParent = new Transaction();
    fakeParent.addInput({
      sourceTXID: 'ab'.repeat(32),
      sourceOutputIndex: 0,
      unlockingScript: LockingScript.fromHex('51') as any,
      sequence: 0xffffffff,
    });
    fakeParent.addOutput({ satoshis: 5000, lockingScript: LockingScript.fromHex(testScriptHex) });
    const unknown = await spend(fakeParent, 0, [{ satoshis: 4000 }]);
    expect(await postTx(base, json(unknown.toHexEF()))).toMatchObject({
      status: 462,
      body: { status: 462, txid: unknown.id('hex') },
    });
    expect(await postTx(base, unknown.toHex(), 'text/plain')).toMatchObject({ status: 462 });

    const tip = (await getJson(`${base}/chain/info`)).body.blocks as number;
    const immature = await spend(await coinbaseTx(base, tip), 0, [{ satoshis: 49 * 100_000_000 }]);
    const r = await postTx(base, json(immature.toHexEF()));
    expect(r).toMatchObject({ status: 462 });
    expect(r.body.detail).toContain('immature');

    const coin = nextCoin();
    const zeroFee = await spend(coins, coin, [{ satoshis: 100_000 }]);
    expect(await postTx(base, json(zeroFee.toHexEF()))).toMatchObject({
      status: 465,
      body: { errorCode: 'ARC_FEE_TOO_LOW' },
    });
    const opReturnValue = await spend(coins, coin, [
      { satoshis: 1000, scriptHex: '006a0568656c6c6f' },
      { satoshis: 98_000 },
    ]);
    expect(await postTx(base, json(opReturnValue.toHexEF()))).toMatchObject({ status: 464 });
    const dust = await spend(coins, coin, [{ satoshis: 0 }, { satoshis: 98_000 }]);
    expect(await postTx(base, json(dust.toHexEF()))).toMatchObject({ status: 464 });
    // A good spend of that same coin is still accepted afterwards.
    const ok = await spend(coins, coin, [{ satoshis: 0, scriptHex: '006a0568656c6c6f' }, { satoshis: 99_000 }]);
    expect(await postTx(base, json(ok.toHexEF()))).toMatchObject({
      status: 200,
      body: { txStatus: 'SEEN_ON_NETWORK' },
    });

    expect(await postTx(base, json('zz'))).toMatchObject({ status: 463, body: { errorCode: 'ARC_MALFORMED' } });
    expect(await postTx(base, json(ok.toHex().slice(0, -4)))).toMatchObject({ status: 463 });
    const trailing = `${ok.toHex()}00`;
    // The txid of malformed raw bytes is their sha256d, so a batch answer can be matched.
    const sha = (b: Buffer) => createHash('sha256').update(b).digest();
    const trailingTxId = Buffer.from(sha(sha(Buffer.from(trailing, 'hex'))))
      .reverse()
      .toString('hex');
    expect(await postTx(base, json(trailing))).toMatchObject({ status: 463, body: { txid: trailingTxId } });
    expect(await postTx(base, 'not json')).toMatchObject({ status: 400, body: { errorCode: 'ARC_BAD_REQUEST' } });
    expect(await postTx(base, json(ok.toHex()), 'application/xml')).toMatchObject({ status: 400 });
    expect(await postTx(base, json(ok.toHex()), 'application/json', { 'X-MaxTimeout': '31' })).toMatchObject({
      status: 400,
    });
    expect(await postTx(base, json(ok.toHex()), 'application/json', { 'X-WaitFor': 'NOPE' })).toMatchObject({
      status: 400,
    });
    expect(await postTx(base, json(ok.toHex()), 'application/json', { 'X-CallbackUrl': 'ftp://x' })).toMatchObject({
      status: 400,
    });
    expect(await getJson(`${base}/v1/tx/${'e'.repeat(64)}`)).toMatchObject({
      status: 404,
      body: {
        status: 404,
        txid: 'e'.repeat(64),
        title: 'Not found',
        extraInfo: '',
        instance: `/v1/tx/${'e'.repeat(64)}`,
      },
    });
    expect(await getJson(`${base}/v1/tx/xyz`)).toMatchObject({ status: 400 });
    expect(await getJson(`${base}/v1/nothing`)).toMatchObject({ status: 404 });
  });

  it('refuses a record transaction funded by an output it never saw: only real, known outputs are spendable (462)', async () => {
    const unfunded = new BsvTransactionBuilder().build({
      kind: 'independent',
      data: new Uint8Array(Buffer.from('unfunded')),
      contentType: 'text/plain',
      funding: [{ txId: 'fa'.repeat(32), vout: 0, satoshis: 1000 }],
    });
    const r = await postTx(base, json(Buffer.from(unfunded.rawTx).toString('hex')));
    expect(r).toMatchObject({ status: 462, body: { txid: unfunded.txId } });
    expect(await redis.hexists(devnetKeys(prefix).raw, unfunded.txId)).toBe(0);
  });

  it('answers a double spend with DOUBLE_SPEND_ATTEMPTED and competingTxs; a spend of an input spent in a block is 462', async () => {
    const coin = nextCoin();
    const first = await spend(coins, coin, [{ satoshis: 99_000 }]);
    const second = await spend(coins, coin, [{ satoshis: 98_000 }]);
    await postTx(base, json(first.toHexEF()));
    const ds = await postTx(base, json(second.toHexEF()));
    expect(ds).toMatchObject({
      status: 200,
      body: { txid: second.id('hex'), txStatus: 'DOUBLE_SPEND_ATTEMPTED', competingTxs: [first.id('hex')] },
    });
    expect(await getJson(`${base}/v1/tx/${second.id('hex')}`)).toMatchObject({
      status: 200,
      body: { txStatus: 'DOUBLE_SPEND_ATTEMPTED' },
    });
    expect(await getJson(`${base}/v1/tx/${first.id('hex')}`)).toMatchObject({
      status: 200,
      body: { txStatus: 'SEEN_ON_NETWORK' },
    });
    const dsCallbacks = await callbackReceiver();
    try {
      // A re-submission of the loser with a callback URL registers it; the resolution is reported.
      await postTx(base, json(second.toHexEF()), 'application/json', {
        'X-CallbackUrl': dsCallbacks.url,
        'X-CallbackToken': 'ds-token-0123456789',
      });
      await eventually(async () => dsCallbacks.received.some((c) => c.body.txStatus === 'DOUBLE_SPEND_ATTEMPTED'));
      const block = await node.mineBlock();
      expect(block.txIds).toContain(first.id('hex'));
      expect(block.txIds).not.toContain(second.id('hex'));
      // Once the competitor is mined, the loser is REJECTED (as ARC resolves it), with a callback.
      expect(await getJson(`${base}/v1/tx/${second.id('hex')}`)).toMatchObject({
        status: 200,
        body: { txStatus: 'REJECTED', competingTxs: [first.id('hex')] },
      });
      await eventually(async () =>
        dsCallbacks.received.some((c) => c.body.txStatus === 'REJECTED' && c.auth === 'Bearer ds-token-0123456789'),
      );
    } finally {
      await dsCallbacks.close();
    }
    const third = await spend(coins, coin, [{ satoshis: 97_000 }]);
    const r = await postTx(base, json(third.toHexEF()));
    expect(r).toMatchObject({ status: 462 });
    expect(r.body.detail).toContain('in a block');
  });

  it('concurrent conflicting spends through two node instances (own connections, one chain): exactly one wins', async () => {
    const other = testRedis(prefix);
    const second = await startTestNode(other.redis, prefix);
    try {
      const coin = nextCoin();
      const spends = await Promise.all(
        Array.from({ length: 10 }, (_, i) => spend(coins, coin, [{ satoshis: 90_000 + i }])),
      );
      const answers = await Promise.all(spends.map((t, i) => postTx(i % 2 ? second.url : base, json(t.toHexEF()))));
      const statuses = answers.map((a) => a.body.txStatus);
      expect(statuses.filter((x) => x === 'SEEN_ON_NETWORK')).toHaveLength(1);
      expect(statuses.filter((x) => x === 'DOUBLE_SPEND_ATTEMPTED')).toHaveLength(9);
      const winner = spends[statuses.indexOf('SEEN_ON_NETWORK')]!.id('hex');
      expect(await redis.hget(devnetKeys(prefix).spent, `${coins.id('hex')}:${coin}`)).toBe(winner);
      for (const a of answers.filter((x) => x.body.txStatus === 'DOUBLE_SPEND_ATTEMPTED'))
        expect(a.body.competingTxs).toEqual([winner]);
    } finally {
      await second.close();
      await other.redis.quit();
    }
  });

  it('/v1/txs in one pass: a double spend later in the batch loses to the earlier spend, and a child of the loser finds no output (462)', async () => {
    const coin = nextCoin();
    const winner = await spend(coins, coin, [{ satoshis: 99_000 }]);
    const loser = await spend(coins, coin, [{ satoshis: 98_000 }]);
    const orphan = await spend(loser, 0, [{ satoshis: 97_000 }]);
    const res = await getJson(`${base}/v1/txs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify([winner, loser, orphan].map((t) => ({ rawTx: t.toHexEF() }))),
    });
    expect(res.body.map((e: any) => [e.txid, e.txStatus ?? e.status])).toEqual([
      [winner.id('hex'), 'SEEN_ON_NETWORK'],
      [loser.id('hex'), 'DOUBLE_SPEND_ATTEMPTED'],
      [orphan.id('hex'), 462],
    ]);
    expect(res.body[1].competingTxs).toEqual([winner.id('hex')]);
    expect(await redis.hexists(devnetKeys(prefix).raw, orphan.id('hex'))).toBe(0);
  });

  it('/v1/txs: json, text/plain and octet-stream; successes first, failures appended, matched by txid; a child may follow its parent', async () => {
    const parent = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    const child = await spend(parent, 0, [{ satoshis: 98_000 }]);
    const bad = await spend(coins, nextCoin(), [{ satoshis: 99_000 }], otherKey);
    const res = await getJson(`${base}/v1/txs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify([
        { rawTx: bad.toHexEF() },
        { rawTx: parent.toHexEF() },
        { rawTx: 'abcd' },
        { rawTx: child.toHexEF() },
      ]),
    });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.map((e: any) => e.txStatus ?? e.status)).toEqual(['SEEN_ON_NETWORK', 'SEEN_ON_NETWORK', 461, 463]);
    expect(res.body[0].txid).toBe(parent.id('hex'));
    expect(res.body[1].txid).toBe(child.id('hex'));
    expect(res.body[2].txid).toBe(bad.id('hex'));

    const t1 = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    const t2 = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    const text = await getJson(`${base}/v1/txs`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: `${t1.toHexEF()}\n${t2.toHex()}\n`,
    });
    expect(text.body.map((e: any) => e.txid)).toEqual([t1.id('hex'), t2.id('hex')]);
    const t3 = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    const bin = await getJson(`${base}/v1/txs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream' },
      body: new Uint8Array(Buffer.concat([Buffer.from(t3.toEF()), Buffer.from(t1.toBinary())])),
    });
    expect(bin.body.map((e: any) => [e.txid, e.txStatus])).toEqual([
      [t3.id('hex'), 'SEEN_ON_NETWORK'],
      [t1.id('hex'), 'SEEN_ON_NETWORK'],
    ]);
    expect(
      (await getJson(`${base}/v1/txs`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }))
        .status,
    ).toBe(400);
  });

  it('MINED after mineBlock(): the BUMP computes the header merkle root and the header hashes to the block hash', async () => {
    const tx = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    await postTx(base, json(tx.toHexEF()));
    const block = await node.mineBlock();
    expect(block.txIds).toContain(tx.id('hex'));
    const st = await getJson(`${base}/v1/tx/${tx.id('hex')}`);
    expect(st.body).toMatchObject({ txStatus: 'MINED', blockHash: block.hash, blockHeight: block.height });
    const header = await getJson(`${base}/block/${block.hash}/header`);
    expect(header.body).toMatchObject({ hash: block.hash, height: block.height, confirmations: 1 });
    expect(blockHash(headerFromFields(header.body))).toBe(block.hash);
    expect((await getJson(`${base}/block/${block.height}/header`)).body).toEqual(header.body);
    expect((await getJson(`${base}/block/99999/header`)).status).toBe(404);
    expect(bumpRoot(st.body.merklePath, tx.id('hex'))).toBe(header.body.merkleroot);
    // A re-POST of a mined tx answers MINED.
    expect(await postTx(base, json(tx.toHexEF()))).toMatchObject({
      status: 200,
      body: { txStatus: 'MINED', blockHash: block.hash },
    });
    // X-WaitFor MINED waits for the next block.
    const later = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    const waiting = postTx(base, json(later.toHexEF()), 'application/json', {
      'X-WaitFor': 'MINED',
      'X-MaxTimeout': '10',
    });
    await eventually(async () => (await getJson(`${base}/v1/tx/${later.id('hex')}`)).status === 200);
    const next = await node.mineBlock();
    expect(await waiting).toMatchObject({ status: 200, body: { txStatus: 'MINED', blockHash: next.hash } });
  });

  it('reorgLastBlock(): the old hash reports confirmations -1, the tx is MINED in the new block with a new BUMP', async () => {
    const tx = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    await postTx(base, json(tx.toHexEF()));
    const block = await node.mineBlock();
    const before = (await getJson(`${base}/v1/tx/${tx.id('hex')}`)).body;
    const r = await node.reorgLastBlock();
    expect(r).toMatchObject({ oldHash: block.hash, height: block.height });
    expect(r.newHash).not.toBe(block.hash);
    expect((await getJson(`${base}/block/${block.hash}/header`)).body.confirmations).toBe(-1);
    const newHeader = (await getJson(`${base}/block/${r.newHash}/header`)).body;
    expect(newHeader.confirmations).toBe(1);
    expect((await getJson(`${base}/chain/info`)).body.bestblockhash).toBe(r.newHash);
    const after = (await getJson(`${base}/v1/tx/${tx.id('hex')}`)).body;
    expect(after).toMatchObject({ txStatus: 'MINED', blockHash: r.newHash, blockHeight: block.height });
    expect(after.merklePath).not.toBe(before.merklePath);
    expect(bumpRoot(after.merklePath, tx.id('hex'))).toBe(newHeader.merkleroot);
    // The chain goes on from the new tip.
    const next = await node.mineBlock();
    expect((await getJson(`${base}/block/${next.hash}/header`)).body.previousblockhash).toBe(r.newHash);
  });

  it('callbacks: MINED with the Bearer token (single and batch), retried after a 500, dropped and duplicated by the faults', async () => {
    const single = await callbackReceiver(1);
    const batch = await callbackReceiver();
    try {
      const a = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      const b = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      const c = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      await postTx(base, json(a.toHexEF()), 'application/json', {
        'X-CallbackUrl': single.url,
        'X-CallbackToken': 'single-token-123',
      });
      await postTx(base, json(b.toHexEF()), 'application/json', {
        'X-CallbackUrl': batch.url,
        'X-CallbackToken': 'batch-token-456',
        'X-CallbackBatch': 'true',
      });
      await postTx(base, json(c.toHexEF()), 'application/json', {
        'X-CallbackUrl': batch.url,
        'X-CallbackToken': 'batch-token-456',
        'X-CallbackBatch': 'true',
      });
      const k = devnetKeys(prefix);
      expect(JSON.parse((await redis.hget(k.callbacks, a.id('hex')))!)).toEqual([
        { url: single.url, token: 'single-token-123', batch: false, full: false },
      ]);
      expect(single.received).toHaveLength(0); // SEEN_ON_NETWORK is not sent without X-FullStatusUpdates
      const block = await node.mineBlock();
      await eventually(async () => single.received.length === 1, 10_000);
      expect(single.received[0]).toMatchObject({
        auth: 'Bearer single-token-123',
        body: { txid: a.id('hex'), txStatus: 'MINED', blockHash: block.hash, blockHeight: block.height },
      });
      expect(bumpRoot(single.received[0]!.body.merklePath, a.id('hex'))).toBe(
        (await getJson(`${base}/block/${block.hash}/header`)).body.merkleroot,
      );
      await eventually(async () => batch.received.length >= 1);
      expect(batch.received[0]!.auth).toBe('Bearer batch-token-456');
      expect(batch.received[0]!.body.count).toBe(2);
      expect(batch.received[0]!.body.callbacks.map((x: any) => x.txid).sort()).toEqual(
        [b.id('hex'), c.id('hex')].sort(),
      );

      // Dropped: the delivery is claimed and never sent.
      node.faults.dropCallbacks = true;
      const d = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      await postTx(base, json(d.toHexEF()), 'application/json', {
        'X-CallbackUrl': single.url,
        'X-CallbackToken': 'single-token-123',
      });
      await node.mineBlock();
      await eventually(async () => (await redis.zcard(k.callbackQueue)) === 0);
      node.faults.dropCallbacks = false;
      expect(single.received.map((x) => x.body.txid)).not.toContain(d.id('hex'));

      // Duplicated: every callback twice.
      node.faults.duplicateCallbacks = true;
      const e = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      await postTx(base, json(e.toHexEF()), 'application/json', {
        'X-CallbackUrl': single.url,
        'X-CallbackToken': 'single-token-123',
      });
      await node.mineBlock();
      await eventually(async () => single.received.filter((x) => x.body.txid === e.id('hex')).length === 2);
      node.faults.duplicateCallbacks = false;

      // Full status updates: SEEN_ON_NETWORK too; a reorg sends MINED again with the new block.
      const f = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      await postTx(base, json(f.toHexEF()), 'application/json', {
        'X-CallbackUrl': single.url,
        'X-CallbackToken': 'single-token-123',
        'X-FullStatusUpdates': 'true',
      });
      await eventually(async () =>
        single.received.some((x) => x.body.txid === f.id('hex') && x.body.txStatus === 'SEEN_ON_NETWORK'),
      );
      await node.mineBlock();
      const reorg = await node.reorgLastBlock();
      await eventually(async () =>
        single.received.some((x) => x.body.txid === f.id('hex') && x.body.blockHash === reorg.newHash),
      );
    } finally {
      await single.close();
      await batch.close();
    }
  });

  it('callbacks of a /v1/txs batch: every accepted tx registered once, a re-POST with a new URL tells only it, one MINED batch per block', async () => {
    const first = await callbackReceiver();
    const second = await callbackReceiver();
    try {
      const txs: Transaction[] = [];
      for (let i = 0; i < 4; i++) txs.push(await spend(coins, nextCoin(), [{ satoshis: 99_000 }]));
      const bad = await spend(coins, nextCoin(), [{ satoshis: 99_000 }], otherKey);
      const post = (list: typeof txs, url: string, token: string) =>
        getJson(`${base}/v1/txs`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'X-CallbackUrl': url,
            'X-CallbackToken': token,
            'X-CallbackBatch': 'true',
          },
          body: JSON.stringify(list.map((t) => ({ rawTx: t.toHexEF() }))),
        });
      expect((await post([...txs, bad], first.url, 'first-token-0001')).status).toBe(200);
      const k = devnetKeys(prefix);
      for (const t of txs)
        expect(JSON.parse((await redis.hget(k.callbacks, t.id('hex')))!)).toEqual([
          { url: first.url, token: 'first-token-0001', batch: true, full: false },
        ]);
      expect(await redis.hexists(k.callbacks, bad.id('hex'))).toBe(0); // refused: nothing registered
      // The same batch again: nothing new. The first two again with another URL: registered beside the first.
      await post(txs, first.url, 'first-token-0001');
      await post(txs.slice(0, 2), second.url, 'second-token-002');
      expect(JSON.parse((await redis.hget(k.callbacks, txs[0]!.id('hex')))!)).toHaveLength(2);
      expect(JSON.parse((await redis.hget(k.callbacks, txs[3]!.id('hex')))!)).toHaveLength(1);

      const block = await node.mineBlock();
      const ids = (r: typeof first) => r.received.flatMap((x) => x.body.callbacks.map((c: any) => c.txid)).sort();
      await eventually(async () => ids(first).length === 4 && ids(second).length === 2);
      expect(ids(first)).toEqual(txs.map((t) => t.id('hex')).sort());
      expect(ids(second)).toEqual(
        txs
          .slice(0, 2)
          .map((t) => t.id('hex'))
          .sort(),
      );
      expect(first.received).toHaveLength(1); // one POST carried the block's four
      for (const c of first.received[0]!.body.callbacks) {
        expect(c).toMatchObject({ txStatus: 'MINED', blockHash: block.hash, blockHeight: block.height });
        expect(bumpRoot(c.merklePath, c.txid)).toBe(
          (await getJson(`${base}/block/${block.hash}/header`)).body.merkleroot,
        );
      }
      await eventually(async () => (await redis.zcard(k.callbackQueue)) === 0);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('a block mined between a transaction’s acceptance and its callback registration: its MINED callback is still sent', async () => {
    const receiver = await callbackReceiver();
    const k = devnetKeys(prefix);
    const hmget = redis.hmget.bind(redis) as (...args: any[]) => Promise<(string | null)[]>;
    let mineFirst = true;
    // The interleaving a loaded node meets: the registration's read of the callbacks hash (after
    // the acceptance) waits for a block, whose own read of the hash finds no registration yet.
    const interleave = jest.spyOn(redis, 'hmget').mockImplementation((async (...args: any[]) => {
      if (mineFirst && args[0] === k.callbacks) {
        mineFirst = false;
        await node.mineBlock();
      }
      return hmget(...args);
    }) as any);
    try {
      const tx = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      const r = await postTx(base, json(tx.toHexEF()), 'application/json', {
        'X-CallbackUrl': receiver.url,
        'X-CallbackToken': 'race-token-00001',
      });
      expect(r).toMatchObject({ status: 200, body: { txid: tx.id('hex') } });
      expect(mineFirst).toBe(false);
      await eventually(async () =>
        receiver.received.some((x) => x.body.txid === tx.id('hex') && x.body.txStatus === 'MINED'),
      );
    } finally {
      interleave.mockRestore();
      await receiver.close();
    }
  });

  it('callbacks: a receiver gets one request at a time; one that fails gets the rest later, nothing lost', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let failures = 0;
    const got: string[] = [];
    const server = http.createServer((req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        setTimeout(() => {
          inFlight--;
          if (failures > 0) {
            failures--;
            res.writeHead(500).end();
            return;
          }
          got.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { txid: string }).txid);
          res.writeHead(200).end();
        }, 20),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cb`;
    try {
      const send = async () => {
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const t = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
          await postTx(base, json(t.toHexEF()), 'application/json', {
            'X-CallbackUrl': url,
            'X-CallbackToken': 'serial-token-0001',
          });
          ids.push(t.id('hex'));
        }
        await node.mineBlock();
        return ids;
      };
      const first = await send();
      await eventually(async () => first.every((id) => got.includes(id)), 10_000);
      expect(maxInFlight).toBe(1);
      failures = 1;
      const second = await send();
      await eventually(async () => second.every((id) => got.includes(id)), 10_000);
      expect(maxInFlight).toBe(1);
      expect(got).toHaveLength(6);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('faults: arcStatus answers every /v1 call with that status; rejectAll refuses every submission and stores nothing; corruptBump breaks the root', async () => {
    node.faults.arcStatus = 503;
    expect(await getJson(`${base}/v1/policy`)).toMatchObject({ status: 503, body: { status: 503 } });
    expect((await fetch(`${base}/v1/health`)).headers.get('retry-after')).toBe('1');
    expect(await postTx(base, json('00'))).toMatchObject({ status: 503 });
    expect((await getJson(`${base}/chain/info`)).status).toBe(200);
    node.faults.arcStatus = undefined;
    expect(await getJson(`${base}/v1/policy`)).toMatchObject({
      status: 200,
      body: { policy: { miningFee: { satoshis: 1, bytes: 1000 } } },
    });
    expect(await getJson(`${base}/v1/health`)).toMatchObject({ status: 200, body: { healthy: true } });

    const tx = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
    node.faults.rejectAll = { code: 461, detail: 'injected' };
    expect(await postTx(base, json(tx.toHexEF()))).toMatchObject({
      status: 461,
      body: { detail: 'injected', txid: tx.id('hex') },
    });
    expect((await getJson(`${base}/v1/tx/${tx.id('hex')}`)).status).toBe(404);
    node.faults.rejectAll = undefined;
    await postTx(base, json(tx.toHexEF()));
    const block = await node.mineBlock();
    node.faults.corruptBump = true;
    const bad = (await getJson(`${base}/v1/tx/${tx.id('hex')}`)).body;
    node.faults.corruptBump = false;
    const root = (await getJson(`${base}/block/${block.hash}/header`)).body.merkleroot;
    let badRoot: string | null = null;
    try {
      badRoot = bumpRoot(bad.merklePath, tx.id('hex'));
    } catch {
      badRoot = null;
    }
    expect(badRoot).not.toBe(root);
    expect(bumpRoot((await getJson(`${base}/v1/tx/${tx.id('hex')}`)).body.merklePath, tx.id('hex'))).toBe(root);
  });
});

describe('devnet node: auth, timer, restart', () => {
  const prefix = uniquePrefix('node-auth');
  const { redis, cleanup } = testRedis(prefix);
  afterAll(() => cleanup());

  it('requires Authorization: Bearer <apiKey> on /v1/* when set (headers stay open); mines on its timer; resumes its chain after a restart', async () => {
    const node = await startTestNode(redis, prefix, { blockIntervalMs: 100, apiKey: 'devnet-secret-key' });
    try {
      expect(await getJson(`${node.url}/v1/policy`)).toMatchObject({
        status: 401,
        body: { status: 401, errorCode: 'ARC_UNAUTHORIZED' },
      });
      expect((await getJson(`${node.url}/v1/policy`, { headers: { Authorization: 'Bearer wrong-key' } })).status).toBe(
        401,
      );
      expect(
        (await getJson(`${node.url}/v1/policy`, { headers: { Authorization: 'Bearer devnet-secret-key' } })).status,
      ).toBe(200);
      expect((await getJson(`${node.url}/chain/info`)).status).toBe(200);
      await eventually(async () => ((await getJson(`${node.url}/chain/info`)).body.blocks as number) >= 4, 10_000);
    } finally {
      await node.close();
    }
    const tip = Number(await redis.hget(devnetKeys(prefix).tip, 'height'));
    const again = await startTestNode(redis, prefix);
    try {
      // No new start-up blocks on a non-empty chain; the chain continues.
      expect((await getJson(`${again.url}/chain/info`)).body.blocks).toBe(tip);
      expect((await again.mineBlock()).height).toBe(tip + 1);
    } finally {
      await again.close();
    }
    expect(await redis.ping()).toBe('PONG'); // the caller's connection stays open
  });
});

describe('devnet node: Redis unavailable', () => {
  it('answers 503 REDIS_UNAVAILABLE with Retry-After (never a hang or a 500) while its Redis is down', async () => {
    const port = await freePort();
    const server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => 200 });
    redis.on('error', () => undefined);
    let node: DevnetNode | null = null;
    try {
      await eventually(async () => (await redis.ping()) === 'PONG', 10_000, 50);
      node = await startTestNode(redis, 'down');
      expect((await getJson(`${node.url}/v1/tx/${'a'.repeat(64)}`)).status).toBe(404);
      server.kill('SIGKILL');
      await new Promise((r) => server.once('exit', r));
      const res = await fetch(`${node.url}/v1/tx/${'a'.repeat(64)}`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toMatchObject({ status: 503, errorCode: 'REDIS_UNAVAILABLE' });
    } finally {
      await node?.close();
      redis.disconnect();
      if (server.exitCode === null) server.kill('SIGKILL');
    }
  });
});

describe('devnet node: callbacks survive a restart', () => {
  const prefix = uniquePrefix('node-cb');
  const { redis, cleanup } = testRedis(prefix);
  afterAll(() => cleanup());

  it('a callback whose receiver was down is delivered by the next node process (queue and registrations live in Redis)', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/cb`;
    const k = devnetKeys(prefix);
    const first = await startTestNode(redis, prefix, { callbackRetryBaseMs: 500 });
    let txId = '';
    try {
      const tx = await spend(await coinbaseTx(first.url, 0), 0, [{ satoshis: 49 * 100_000_000 }]);
      txId = tx.id('hex');
      await postTx(first.url, json(tx.toHexEF()), 'application/json', {
        'X-CallbackUrl': url,
        'X-CallbackToken': 'restart-token-123456',
      });
      await first.mineBlock();
      // The first attempt was refused (nothing listens yet) and the retry is queued in Redis.
      await eventually(async () => (await redis.zrange(k.callbackQueue, 0, -1)).some((m) => m.includes('"attempt":1')));
    } finally {
      await first.close();
    }
    const receiver = await callbackReceiverOn(port);
    const second = await startTestNode(redis, prefix);
    try {
      await eventually(async () => receiver.received.length > 0, 10_000);
      expect(receiver.received[0]).toMatchObject({
        auth: 'Bearer restart-token-123456',
        body: { txid: txId, txStatus: 'MINED' },
      });
      // Removed from the queue once the node has read the 2xx (just after the receiver saw it).
      await eventually(async () => (await redis.zcard(k.callbackQueue)) === 0, 5_000);
    } finally {
      await second.close();
      await receiver.close();
    }
  });

  it('a block committed by a node that stopped before queuing its callbacks gets them from the next node process', async () => {
    const receiver = await callbackReceiver();
    const first = await startTestNode(redis, prefix);
    let txId = '';
    try {
      const tx = await spend(await coinbaseTx(first.url, 1), 0, [{ satoshis: 49 * 100_000_000 }]);
      txId = tx.id('hex');
      await postTx(first.url, json(tx.toHexEF()), 'application/json', {
        'X-CallbackUrl': receiver.url,
        'X-CallbackToken': 'sweep-token-1234567',
      });
    } finally {
      await first.close();
    }
    // The block is committed without the node (as if it crashed right after the commit).
    const producer = new DevnetBlockProducer(redis, prefix, { coinbaseLockingScriptHex: testScriptHex });
    const produced = await producer.produceBlock(new Date());
    expect(produced.status).toBe('produced');
    const second = await startTestNode(redis, prefix);
    try {
      await eventually(
        async () => receiver.received.some((c) => c.body.txid === txId && c.body.txStatus === 'MINED'),
        10_000,
      );
      expect(receiver.received.filter((c) => c.body.txid === txId)).toHaveLength(1);
    } finally {
      await second.close();
      await receiver.close();
    }
  });

  it('a delivery claimed by a process that died is claimed again once its lease expires', async () => {
    const receiver = await callbackReceiver();
    const k = devnetKeys(`${prefix}:lease`);
    const faults = { dropCallbacks: false, duplicateCallbacks: false };
    const callbacks = new Callbacker({ redis, keys: k, clock: { now: () => new Date() }, faults, leaseMs: 300 });
    // Closed: no poll loop and no kick, so only this test's explicit calls claim anything.
    await callbacks.close();
    try {
      const record = {
        txid: 'ab'.repeat(32),
        txStatus: 'MINED' as const,
        blockHash: 'cd'.repeat(32),
        blockHeight: 7,
        merklePath: '00',
        extraInfo: '',
        competingTxs: null,
      };
      await callbacks.notify(record, { url: receiver.url, token: 'lease-token-12345678', batch: false, full: false });
      // A claimer takes it with a lease and dies before sending (a direct claim, nothing sent).
      const claimed = await (redis as unknown as { callbackClaim(...a: string[]): Promise<string[]> }).callbackClaim(
        k.callbackQueue,
        String(Date.now() + 1000),
        String(Date.now() + 300),
        '10',
      );
      expect(claimed).toHaveLength(1);
      await callbacks.deliverDue();
      expect(receiver.received).toHaveLength(0); // still leased
      await eventually(
        async () => {
          await callbacks.deliverDue();
          return receiver.received.length === 1;
        },
        5_000,
        50,
      );
      expect(receiver.received[0]).toMatchObject({
        auth: 'Bearer lease-token-12345678',
        body: { txid: record.txid, txStatus: 'MINED', blockHeight: 7 },
      });
      expect(await redis.zcard(k.callbackQueue)).toBe(0);
    } finally {
      await receiver.close();
    }
  });
});
