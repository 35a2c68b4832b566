/* eslint-disable @typescript-eslint/no-explicit-any */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LockingScript, Transaction, UnlockingScript } from '@bsv/sdk';
import { eventually, freePort, testRedis, uniquePrefix } from '@proofline/shared-testing';
import {
  ARC_EXAMPLE_REJECTED_CALLBACKS,
  Callbacker,
  LENIENT_ARC,
  NO_REALITIES,
  STRICT_ARC,
  devnetKeys,
} from '../index';
import type { ArcStrictness, DevnetNode, TxStatusRecord } from '../index';
import {
  callbackReceiver,
  coinbaseTx,
  getJson,
  postTx,
  spend,
  split,
  startTestNode,
  testScriptHex,
} from './node-test-kit';

// The root jest run (all projects) ignores the preset's testTimeout: set it here, the machine is shared.
jest.setTimeout(30_000);

/** Retries an assertion until it holds (or `timeoutMs` passes, with its last failure). */
const until = (assertion: () => unknown, timeoutMs = 10_000) =>
  eventually(async () => {
    await assertion();
    return true;
  }, timeoutMs);
/** `tx` (one input, empty unlocking script) in Extended Format claiming its input spends `satoshis` locked by `lockingScriptHex`. */
function efClaiming(tx: Transaction, satoshis: number, lockingScriptHex: string): { hex: string; txid: string } {
  const raw = tx.toHex();
  // version | 01 | outpoint (36 B) | 00 (empty script) | sequence: 4 + 1 + 36 + 1 + 4 bytes.
  const inputEnd = 2 * (4 + 1 + 36 + 1 + 4);
  const sats = Buffer.alloc(8);
  sats.writeBigUInt64LE(BigInt(satoshis));
  const script = Buffer.from(lockingScriptHex, 'hex');
  const ef =
    raw.slice(0, 8) +
    '0000000000ef' +
    raw.slice(8, inputEnd) +
    sats.toString('hex') +
    script.length.toString(16).padStart(2, '0') +
    lockingScriptHex +
    raw.slice(inputEnd);
  return { hex: ef, txid: tx.id('hex') };
}

/** A transaction spending `vout` of `parent` with an empty unlocking script into one output to the test key. */
async function spendUnsigned(parent: Transaction, vout: number, satoshis: number): Promise<Transaction> {
  const tx = new Transaction();
  tx.addInput({ sourceTXID: parent.id('hex'), sourceOutputIndex: vout, unlockingScript: new UnlockingScript() });
  tx.addOutput({ satoshis, lockingScript: LockingScript.fromHex(testScriptHex) });
  return tx;
}

const json = (hex: string) => JSON.stringify({ rawTx: hex });
const postTxs = (base: string, hexes: readonly string[], headers: Record<string, string> = {}) =>
  getJson(`${base}/v1/txs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(hexes.map((rawTx) => ({ rawTx }))),
  });

describe('devnet node: ARC strictness and realities, each on and off', () => {
  const prefix = uniquePrefix('strict');
  const { redis, cleanup } = testRedis(prefix);
  const keys = devnetKeys(prefix);
  let node: DevnetNode;
  let base: string;
  /** 60 coins of 100 000 sat to the test key (a split of the genesis coinbase, stored). */
  let coins: Transaction;
  let coinIndex = 0;
  const nextCoin = () => coinIndex++;
  const stored = async (txId: string) => (await redis.hexists(keys.raw, txId)) === 1;

  beforeAll(async () => {
    node = await startTestNode(redis, prefix);
    base = node.url;
    coins = await split(await coinbaseTx(base, 0), 60);
    expect(await postTx(base, json(coins.toHexEF()))).toMatchObject({ status: 200 });
  });
  afterEach(() => {
    Object.assign(node.strictness, LENIENT_ARC);
    Object.assign(node.realities, NO_REALITIES);
  });
  afterAll(async () => {
    await node.close();
    await cleanup();
  });

  const strict = (patch: Partial<ArcStrictness> = {}) => Object.assign(node.strictness, STRICT_ARC, patch);

  describe('460: a raw transaction needs its parents stored before the request', () => {
    it('off (default): a raw child after its parent in one /v1/txs is accepted', async () => {
      const parent = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      const child = await spend(parent, 0, [{ satoshis: 98_000 }]);
      const r = await postTxs(base, [parent.toHex(), child.toHex()]);
      expect(r.body.map((e: any) => [e.txid, e.txStatus ?? e.status])).toEqual([
        [parent.id('hex'), 'SEEN_ON_NETWORK'],
        [child.id('hex'), 'SEEN_ON_NETWORK'],
      ]);
    });

    it('on: the raw child of a parent in the same request is 460 (ARC validates the whole request first); the parent is accepted', async () => {
      strict();
      const parent = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      const child = await spend(parent, 0, [{ satoshis: 98_000 }]);
      const r = await postTxs(base, [parent.toHex(), child.toHex()]);
      expect(r.status).toBe(200);
      expect(r.body).toHaveLength(2);
      expect(r.body[0]).toMatchObject({ txid: parent.id('hex'), txStatus: 'SEEN_ON_NETWORK' });
      expect(r.body[1]).toMatchObject({
        status: 460,
        txid: child.id('hex'),
        title: 'Not extended format',
        errorCode: 'ARC_NOT_EXTENDED_FORMAT',
        type: 'https://bitcoin-sv.github.io/arc/#/errors?id=_460',
      });
      expect(await stored(child.id('hex'))).toBe(false);
      // Once the parent is stored, the same raw child is accepted in a later request.
      expect(await postTx(base, child.toHex(), 'text/plain')).toMatchObject({
        status: 200,
        body: { txid: child.id('hex'), txStatus: 'SEEN_ON_NETWORK' },
      });
    });

    it('on: an EF child of a parent in the same request is accepted (validated with the outputs its EF carries)', async () => {
      strict();
      const parent = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      const child = await spend(parent, 0, [{ satoshis: 98_000 }]);
      const r = await postTxs(base, [parent.toHexEF(), child.toHexEF()]);
      expect(r.body.map((e: any) => e.txStatus)).toEqual(['SEEN_ON_NETWORK', 'SEEN_ON_NETWORK']);
      expect(await stored(child.id('hex'))).toBe(true);
    });

    it('a raw transaction whose parent is unknown: 462 off, 460 on', async () => {
      const ghost = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]); // never submitted
      const orphan = await spend(ghost, 0, [{ satoshis: 98_000 }]);
      expect(await postTx(base, orphan.toHex(), 'text/plain')).toMatchObject({ status: 462 });
      strict();
      expect(await postTx(base, orphan.toHex(), 'text/plain')).toMatchObject({
        status: 460,
        body: { txid: orphan.id('hex') },
      });
    });

    it('an EF transaction whose parent is unknown: 462 off; on, SEEN_IN_ORPHAN_MEMPOOL until the parent is accepted, then SEEN_ON_NETWORK (a double spend among orphans DOUBLE_SPEND_ATTEMPTED, one its parent refuses REJECTED)', async () => {
      const ghost = await spend(coins, nextCoin(), [{ satoshis: 49_000 }, { satoshis: 49_000 }]); // submitted last
      const orphan = await spend(ghost, 0, [{ satoshis: 48_000 }]);
      const grandchild = await spend(orphan, 0, [{ satoshis: 47_000 }]);
      const rival = await spend(ghost, 0, [{ satoshis: 47_500 }]);
      expect(await postTx(base, json(orphan.toHexEF()))).toMatchObject({ status: 462 });
      strict();
      const receiver = await callbackReceiver();
      try {
        const quick = { 'X-MaxTimeout': '1' };
        const full = { ...quick, 'X-CallbackUrl': receiver.url, 'X-FullStatusUpdates': 'true' };
        expect(await postTx(base, json(orphan.toHexEF()), 'application/json', full)).toMatchObject({
          status: 200,
          body: { txid: orphan.id('hex'), txStatus: 'SEEN_IN_ORPHAN_MEMPOOL' },
        });
        expect(await postTx(base, json(grandchild.toHexEF()), 'application/json', quick)).toMatchObject({
          body: { txStatus: 'SEEN_IN_ORPHAN_MEMPOOL' },
        });
        expect(await postTx(base, json(rival.toHexEF()), 'application/json', quick)).toMatchObject({
          body: { txStatus: 'SEEN_IN_ORPHAN_MEMPOOL' },
        });
        // EF that lies about the output it spends: valid against the lie (OP_TRUE), not against the parent.
        const liar = efClaiming(await spendUnsigned(ghost, 1, 48_000), 49_000, '51');
        expect(await postTx(base, json(liar.hex), 'application/json', quick)).toMatchObject({
          body: { txid: liar.txid, txStatus: 'SEEN_IN_ORPHAN_MEMPOOL' },
        });
        expect((await getJson(`${base}/v1/tx/${orphan.id('hex')}`)).body.txStatus).toBe('SEEN_IN_ORPHAN_MEMPOOL');
        expect(await stored(orphan.id('hex'))).toBe(false);
        await until(() => expect(receiver.received.map((c) => c.body.txStatus)).toEqual(['SEEN_IN_ORPHAN_MEMPOOL']));

        expect(await postTx(base, json(ghost.toHexEF()))).toMatchObject({ body: { txStatus: 'SEEN_ON_NETWORK' } });
        const status = async (txid: string) => (await getJson(`${base}/v1/tx/${txid}`)).body;
        expect(await status(orphan.id('hex'))).toMatchObject({ txStatus: 'SEEN_ON_NETWORK' });
        expect(await status(grandchild.id('hex'))).toMatchObject({ txStatus: 'SEEN_ON_NETWORK' });
        expect(await status(rival.id('hex'))).toMatchObject({
          txStatus: 'DOUBLE_SPEND_ATTEMPTED',
          competingTxs: [orphan.id('hex')],
        });
        expect(await status(liar.txid)).toMatchObject({ txStatus: 'REJECTED' });
        expect((await status(liar.txid)).extraInfo).toContain('input 0');
        expect(await stored(grandchild.id('hex'))).toBe(true);
        await until(() =>
          expect(receiver.received.map((c) => c.body.txStatus)).toEqual(['SEEN_IN_ORPHAN_MEMPOOL', 'SEEN_ON_NETWORK']),
        );
        expect(await redis.hlen(keys.orphans)).toBe(0);
      } finally {
        await receiver.close();
      }
    });

    it('standardFormatSupported=false: every new raw transaction is 460, EF is accepted, /v1/policy says so; a known one answers its status', async () => {
      const known = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      expect(await postTx(base, known.toHex(), 'text/plain')).toMatchObject({ status: 200 });
      node.strictness.standardFormatSupported = false;
      const raw = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      expect(await postTx(base, raw.toHex(), 'text/plain')).toMatchObject({
        status: 460,
        body: { txid: raw.id('hex') },
      });
      expect(await stored(raw.id('hex'))).toBe(false);
      expect(await postTx(base, json(raw.toHexEF()))).toMatchObject({
        status: 200,
        body: { txStatus: 'SEEN_ON_NETWORK' },
      });
      expect(await postTx(base, known.toHex(), 'text/plain')).toMatchObject({ status: 200 });
      expect((await getJson(`${base}/v1/policy`)).body.policy.standardFormatSupported).toBe(false);
      node.strictness.standardFormatSupported = true;
      expect((await getJson(`${base}/v1/policy`)).body.policy.standardFormatSupported).toBe(true);
    });
  });

  describe('400: problems of the request itself, with no txid', () => {
    it('unreadable transaction bytes: 463 for that entry off; 400 for the whole request on, nothing of it stored', async () => {
      const ok = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      const lenient = await postTxs(base, ['zz']);
      expect(lenient.body).toEqual([expect.objectContaining({ status: 463 })]);
      expect(await postTx(base, json(ok.toHex().slice(0, -4)))).toMatchObject({ status: 463 });
      strict();
      const r = await postTxs(base, [ok.toHex(), ok.toHex().slice(0, -4)]);
      expect(r).toMatchObject({
        status: 400,
        body: { status: 400, txid: null, title: 'Bad request', errorCode: 'ARC_BAD_REQUEST' },
      });
      expect(await stored(ok.id('hex'))).toBe(false);
      expect(await postTx(base, json('zz'))).toMatchObject({ status: 400, body: { txid: null } });
      expect(await postTx(base, Buffer.from('0100'), 'application/octet-stream')).toMatchObject({ status: 400 });
    });

    it('X-CallbackUrl containing a refused substring (ARC example config: localhost): 400 on, accepted off', async () => {
      const receiver = await callbackReceiver();
      try {
        const localhostUrl = receiver.url.replace('127.0.0.1', 'localhost');
        const a = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
        expect(
          await postTx(base, json(a.toHexEF()), 'application/json', { 'X-CallbackUrl': localhostUrl }),
        ).toMatchObject({ status: 200 });
        node.strictness.rejectCallbackContaining = ARC_EXAMPLE_REJECTED_CALLBACKS;
        const b = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
        const r = await postTxs(base, [b.toHexEF()], { 'X-CallbackUrl': localhostUrl });
        expect(r).toMatchObject({ status: 400, body: { status: 400, txid: null } });
        expect(r.body.detail).toContain('http://localhost');
        expect(await stored(b.id('hex'))).toBe(false);
        // Other request-level problems answer 400 the same way (on and off).
        for (const headers of [
          { 'X-WaitFor': 'SOON' },
          { 'X-MaxTimeout': '31' },
          { 'X-CallbackUrl': 'not a url' },
        ] as Record<string, string>[])
          expect(await postTx(base, json(b.toHexEF()), 'application/json', headers)).toMatchObject({
            status: 400,
            body: { txid: null, errorCode: 'ARC_BAD_REQUEST' },
          });
        expect(
          await postTx(base, json(b.toHexEF()), 'application/json', { 'X-CallbackUrl': receiver.url }),
        ).toMatchObject({
          status: 200,
        });
      } finally {
        await receiver.close();
      }
    });
  });

  describe('callbacks', () => {
    it('DOUBLE_SPEND_ATTEMPTED: to every registration off; on, only with X-FullStatusUpdates (REJECTED to both once the winner is mined)', async () => {
      for (const mode of ['off', 'on'] as const) {
        if (mode === 'on') strict();
        const plain = await callbackReceiver();
        const full = await callbackReceiver();
        try {
          const coin = nextCoin();
          const first = await spend(coins, coin, [{ satoshis: 99_000 }]);
          expect(await postTx(base, json(first.toHexEF()))).toMatchObject({ status: 200 });
          const loserA = await spend(coins, coin, [{ satoshis: 98_000 }]);
          const loserB = await spend(coins, coin, [{ satoshis: 97_000 }]);
          expect(
            await postTx(base, json(loserA.toHexEF()), 'application/json', { 'X-CallbackUrl': plain.url }),
          ).toMatchObject({ status: 200, body: { txStatus: 'DOUBLE_SPEND_ATTEMPTED' } });
          expect(
            await postTx(base, json(loserB.toHexEF()), 'application/json', {
              'X-CallbackUrl': full.url,
              'X-FullStatusUpdates': 'true',
            }),
          ).toMatchObject({ status: 200, body: { txStatus: 'DOUBLE_SPEND_ATTEMPTED' } });
          await until(() => expect(full.received.map((r) => r.body.txStatus)).toEqual(['DOUBLE_SPEND_ATTEMPTED']));
          if (mode === 'off')
            await until(() => expect(plain.received.map((r) => r.body.txStatus)).toEqual(['DOUBLE_SPEND_ATTEMPTED']));
          await node.mineBlock();
          await until(() => expect(plain.received.map((r) => r.body.txStatus)).toContain('REJECTED'));
          await until(() => expect(full.received.map((r) => r.body.txStatus)).toContain('REJECTED'));
          if (mode === 'on') expect(plain.received.map((r) => r.body.txStatus)).toEqual(['REJECTED']);
        } finally {
          await plain.close();
          await full.close();
        }
      }
    });

    /** Keys of their own: the node's callback loop never claims these deliveries. */
    const cbKeys = devnetKeys(`${prefix}:callbacker`);
    /** A Callbacker (closed: only explicit passes). */
    const callbacker = (strictness: ArcStrictness, timeoutMs?: number) => {
      const c = new Callbacker({
        redis,
        keys: cbKeys,
        clock: { now: () => new Date() },
        faults: { dropCallbacks: false, duplicateCallbacks: false },
        strictness,
        retryBaseMs: 0,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      });
      return c;
    };
    const record = (n: number): TxStatusRecord => ({
      txid: n.toString(16).padStart(64, '0'),
      txStatus: 'MINED',
      blockHash: 'cd'.repeat(32),
      blockHeight: 7,
      merklePath: '00',
      extraInfo: '',
      competingTxs: null,
    });
    const queued = async () =>
      (await redis.zrange(cbKeys.callbackQueue, 0, -1)).map((m) => JSON.parse(m) as { url: string; attempt: number });

    it('batches: ≤ 50 per POST off, ≤ 500 on', async () => {
      for (const [strictness, sizes] of [
        [LENIENT_ARC, [50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 1]],
        [STRICT_ARC, [500, 1]],
      ] as const) {
        const receiver = await callbackReceiver();
        const c = callbacker(strictness);
        await c.close();
        try {
          const reg = { url: receiver.url, token: 't', batch: true, full: false };
          await c.notifyEach(Array.from({ length: 501 }, (_, i) => ({ record: record(i), regs: [reg] })));
          // A pass claims at most 500 due deliveries (ARC's GetUnsent limit): two passes.
          await c.deliverDue();
          await c.deliverDue();
          expect(await redis.zcard(cbKeys.callbackQueue)).toBe(0);
          expect(receiver.received.map((r) => r.body.count)).toEqual(sizes);
          expect(new Set(receiver.received.flatMap((r) => r.body.callbacks.map((cb: any) => cb.txid))).size).toBe(501);
        } finally {
          await receiver.close();
        }
      }
    });

    it('a network error (refused, or no answer within the timeout) is retried off and not on; a non-2xx answer is retried in both', async () => {
      const closedUrl = `http://127.0.0.1:${await freePort()}/callbacks`;
      const silent = http.createServer(() => undefined); // reads the request, never answers
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
      const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/callbacks`;
      const failing = await callbackReceiver(100);
      try {
        for (const strictness of [LENIENT_ARC, STRICT_ARC]) {
          const c = callbacker(strictness, 300);
          await c.close();
          for (const url of [closedUrl, silentUrl, failing.url])
            await c.notifyEach([{ record: record(7), regs: [{ url, token: '', batch: false, full: false }] }]);
          await c.deliverDue();
          const left = await queued();
          const retried = (url: string) => left.filter((d) => d.url === url && d.attempt === 1).length;
          expect(retried(failing.url)).toBe(1);
          expect(retried(closedUrl)).toBe(strictness.callbackRetryOnNetworkError ? 1 : 0);
          expect(retried(silentUrl)).toBe(strictness.callbackRetryOnNetworkError ? 1 : 0);
          await redis.del(cbKeys.callbackQueue);
        }
      } finally {
        silent.closeAllConnections();
        await new Promise<void>((r) => silent.close(() => r()));
        await failing.close();
      }
    });

    it('non-2xx answers: 5 attempts off, 10 on (ARC maxRetries), then given up', async () => {
      for (const strictness of [LENIENT_ARC, STRICT_ARC]) {
        const failing = await callbackReceiver(1000);
        const c = callbacker(strictness);
        await c.close();
        try {
          await c.notifyEach([
            { record: record(8), regs: [{ url: failing.url, token: '', batch: false, full: false }] },
          ]);
          let passes = 0;
          while ((await redis.zcard(cbKeys.callbackQueue)) > 0 && passes < 20) {
            await c.deliverDue();
            passes += 1;
          }
          expect(passes).toBe(strictness.callbackMaxAttempts);
        } finally {
          await failing.close();
        }
      }
    });
  });

  describe('realities', () => {
    it('time to SEEN: off, SEEN_ON_NETWORK at once; on, the lower status until then (X-WaitFor times out), SEEN after, with its full-status callback', async () => {
      const now = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      expect(await postTx(base, json(now.toHexEF()), 'application/json', { 'X-MaxTimeout': '1' })).toMatchObject({
        body: { txStatus: 'SEEN_ON_NETWORK' },
      });
      Object.assign(node.realities, { timeToSeenMs: 2500, statusBeforeSeen: 'STORED' });
      const receiver = await callbackReceiver();
      try {
        const late = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
        const started = Date.now();
        const r = await postTx(base, json(late.toHexEF()), 'application/json', {
          'X-MaxTimeout': '1',
          'X-CallbackUrl': receiver.url,
          'X-FullStatusUpdates': 'true',
        });
        expect(r).toMatchObject({ status: 200, body: { txid: late.id('hex'), txStatus: 'STORED' } });
        expect(Date.now() - started).toBeGreaterThanOrEqual(900); // waited X-MaxTimeout for SEEN
        expect((await getJson(`${base}/v1/tx/${late.id('hex')}`)).body.txStatus).toBe('STORED');
        expect(receiver.received).toEqual([]);
        // A batch waits for all of them at once and answers what each reached.
        const batch = await postTxs(base, [(await spend(coins, nextCoin(), [{ satoshis: 99_000 }])).toHexEF()], {
          'X-MaxTimeout': '1',
        });
        expect(batch.body.map((e: any) => e.txStatus)).toEqual(['STORED']);
        await until(
          async () => expect((await getJson(`${base}/v1/tx/${late.id('hex')}`)).body.txStatus).toBe('SEEN_ON_NETWORK'),
          5000,
        );
        expect(Date.now() - started).toBeGreaterThanOrEqual(2400);
        await until(() =>
          expect(receiver.received.map((c) => [c.body.txid, c.body.txStatus])).toEqual([
            [late.id('hex'), 'SEEN_ON_NETWORK'],
          ]),
        );
        // X-WaitFor long enough: the answer is SEEN_ON_NETWORK, after the time to SEEN.
        const waited = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
        const t0 = Date.now();
        expect(await postTx(base, json(waited.toHexEF()), 'application/json', { 'X-MaxTimeout': '10' })).toMatchObject({
          body: { txStatus: 'SEEN_ON_NETWORK' },
        });
        expect(Date.now() - t0).toBeGreaterThanOrEqual(2400);
      } finally {
        await receiver.close();
      }
    });

    it('submission delay: the answer comes no earlier than the delay, the transaction is stored at once', async () => {
      node.realities.submitDelayMs = 800;
      const tx = await spend(coins, nextCoin(), [{ satoshis: 99_000 }]);
      const started = Date.now();
      const answer = postTx(base, json(tx.toHexEF()));
      await until(async () => expect(await stored(tx.id('hex'))).toBe(true));
      const r = await answer;
      expect(r).toMatchObject({ status: 200, body: { txStatus: 'SEEN_ON_NETWORK' } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(790);
      const t1 = Date.now();
      const batch = await postTxs(base, [(await spend(coins, nextCoin(), [{ satoshis: 99_000 }])).toHexEF()]);
      expect(batch.body.map((e: any) => e.txStatus)).toEqual(['SEEN_ON_NETWORK']);
      expect(Date.now() - t1).toBeGreaterThanOrEqual(790);
      node.realities.submitDelayMs = 0;
      const t2 = Date.now();
      await postTx(base, json((await spend(coins, nextCoin(), [{ satoshis: 99_000 }])).toHexEF()));
      expect(Date.now() - t2).toBeLessThan(790);
    });

    it('a double spend marks both sides on, and the first spender ends MINED; off, the first spender stays SEEN_ON_NETWORK', async () => {
      for (const both of [false, true]) {
        node.realities.doubleSpendMarksBoth = both;
        Object.assign(node.strictness, STRICT_ARC);
        const receiver = await callbackReceiver();
        try {
          const coin = nextCoin();
          const first = await spend(coins, coin, [{ satoshis: 99_000 }]);
          const second = await spend(coins, coin, [{ satoshis: 98_000 }]);
          expect(
            await postTx(base, json(first.toHexEF()), 'application/json', {
              'X-CallbackUrl': receiver.url,
              'X-FullStatusUpdates': 'true',
            }),
          ).toMatchObject({ body: { txStatus: 'SEEN_ON_NETWORK' } });
          expect(await postTx(base, json(second.toHexEF()))).toMatchObject({
            body: { txStatus: 'DOUBLE_SPEND_ATTEMPTED', competingTxs: [first.id('hex')] },
          });
          const firstNow = (await getJson(`${base}/v1/tx/${first.id('hex')}`)).body;
          if (both) {
            expect(firstNow).toMatchObject({ txStatus: 'DOUBLE_SPEND_ATTEMPTED', competingTxs: [second.id('hex')] });
            // A re-POST answers it too.
            expect(await postTx(base, json(first.toHexEF()))).toMatchObject({
              body: { txStatus: 'DOUBLE_SPEND_ATTEMPTED' },
            });
          } else expect(firstNow.txStatus).toBe('SEEN_ON_NETWORK');
          await node.mineBlock();
          expect((await getJson(`${base}/v1/tx/${first.id('hex')}`)).body.txStatus).toBe('MINED');
          expect((await getJson(`${base}/v1/tx/${second.id('hex')}`)).body.txStatus).toBe('REJECTED');
          await until(() =>
            expect(receiver.received.map((c) => c.body.txStatus)).toEqual(
              both ? ['SEEN_ON_NETWORK', 'DOUBLE_SPEND_ATTEMPTED', 'MINED'] : ['SEEN_ON_NETWORK', 'MINED'],
            ),
          );
        } finally {
          await receiver.close();
        }
      }
    });
  });
});
