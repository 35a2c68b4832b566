import { Transaction } from '@bsv/sdk';
import { arcCallbackQueue, arcCallbackReceiver, arcKeys, handleArcCallback } from '@proofline/chain-arc';
import type { ArcChain } from '@proofline/chain-arc';
import { startArcDevnet, startArcRuleProxy, statusEntry, submittedTxIds } from '@proofline/devnet-testing';
import type { ArcDevnet, ArcRuleProxy, ProxiedRequest } from '@proofline/devnet-testing';
import { RecordStore } from '@proofline/records-data-access';
import { readPublicationPause } from '@proofline/records-publication';
import type { Publication } from '@proofline/records-publication';
import { composePublicationSide } from '@proofline/records-publication-testing';
import type { PublicationSide } from '@proofline/records-publication-testing';
import { createLogger } from '@proofline/shared-logger';
import { newDeploymentPartitions } from '@proofline/shared-redis';
import { eventually, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { call, closeDevnetSpec, seedKey, startApi } from '../testing/harness';
import type { RunningApi } from '../testing/harness';

// Every ARC answer read as ARC means it: the real publisher and confirmation pass, real Redis and
// BullMQ, the devnet node behind a real HTTP server that answers as ARC does where the node does
// not: a 400 about the request (no txid), DOUBLE_SPEND_ATTEMPTED, statuses below SEEN_ON_NETWORK
// when X-WaitFor times out, a refusal of a transaction the chain then mines.

jest.setTimeout(60_000);

/** ARC's problem body for a request it cannot take (handler/default.go: no txid). */
const REQUEST_PROBLEM = {
  type: 'https://bitcoin-sv.github.io/arc/#/errors?id=_400',
  title: 'Bad request',
  status: 400,
  detail: 'The request seems to be malformed and cannot be processed',
  instance: null,
  txid: null,
  extraInfo: 'invalid callback url: localhost is not allowed',
};
const isSubmit = (req: ProxiedRequest) => req.method === 'POST' && req.path.startsWith('/v1/tx');
const statusQueryOf = (req: ProxiedRequest) =>
  req.method === 'GET' ? (/^\/v1\/tx\/([0-9a-f]{64})$/.exec(req.path)?.[1] ?? null) : null;
/** A transaction that competes for the same inputs (ARC's `competingTxs`); its status is the spec's to answer. */
const COMPETING = 'c0'.repeat(32);
const ARC_UNKNOWN = {
  status: 404,
  body: {
    type: 'https://bitcoin-sv.github.io/arc/#/errors?id=_404',
    title: 'Not found',
    status: 404,
    detail: 'The requested resource could not be found',
    txid: null,
  },
};
/** ARC's answer refusing each transaction of a submission with `code` (a problem naming its txid). */
const refuseEach = (req: ProxiedRequest, code: number, title: string, extraInfo: string) => {
  const problems = submittedTxIds(req).map((txid) => ({
    type: `https://bitcoin-sv.github.io/arc/#/errors?id=_${code}`,
    title,
    status: code,
    detail: title,
    txid,
    extraInfo,
  }));
  return req.path === '/v1/txs' ? { status: 200, body: problems } : { status: code, body: problems[0] };
};
/** The answer entries of a submission, each at `txStatus`. */
const answerEach = (req: ProxiedRequest, txStatus: string, extra: Record<string, unknown> = {}) => {
  const entries = submittedTxIds(req).map((txId) => statusEntry(txId, txStatus, extra));
  return { status: 200, body: req.path === '/v1/txs' ? entries : entries[0] };
};

describe('ARC answers read as ARC means them (the devnet node behind an ARC-answering server)', () => {
  const prefix = uniquePrefix('readings');
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', name: 'test', destination: { write: (l: string) => lines.push(l) } });
  const nodeRedis = testRedisClient({ maxRetriesPerRequest: null });
  const store = new RecordStore(nodeRedis, prefix, { partitions: newDeploymentPartitions(nodeRedis) });
  let dev: ArcDevnet;
  let proxy: ArcRuleProxy;
  let api: RunningApi;
  let worker: PublicationSide;
  let chain: ArcChain;
  let publication: Publication;
  let writerKey: string;

  const write = async (body: string): Promise<string> => {
    const res = await call(api, 'POST', '/api/v1/records', {
      key: writerKey,
      body,
      contentType: 'application/octet-stream',
    });
    expect(res.status).toBe(200);
    return (res.body as { txId: string }).txId;
  };
  const readiness = async () =>
    (await (await fetch(`${api.baseUrl}/readiness`)).json()) as {
      status: string;
      checks: { publication?: string; publicationDetail?: string };
    };
  const statusOf = async (txId: string, family: 'records' | 'linkedrecords' = 'records') =>
    (await call(api, 'GET', `/api/v1/${family}/${txId}/status`, { key: writerKey })).body as {
      publication: string;
      failure?: string;
      confirmation: { blockHash: string } | null;
    };
  const unsettled = async () => (await dev.pool.unsettled(1000)).map((t) => t.txId);
  const free = async () => [...(await dev.pool.freeOutpoints()).keys()];
  const inputsOf = async (txId: string) => (await dev.pool.unsettled(1000)).find((t) => t.txId === txId)?.inputs ?? [];
  const logged = (msg: string) => lines.filter((l) => l.includes(`"msg":"${msg}`)).length;
  /**
   * A linked create the proxy's rule has ARC refuse (465), failed, and an update of it, failed
   * because of it (never sent).
   */
  const refusedChain = async (body: string) => {
    const created = await call(api, 'POST', '/api/v1/linkedrecords', {
      key: writerKey,
      body,
      contentType: 'application/octet-stream',
    });
    expect(created.status).toBe(200);
    const root = created.body as { txId: string; updateToken: string };
    await eventually(async () => (await store.state(root.txId)) === 'failed', 10_000, 50);
    expect((await store.meta(root.txId))?.failure).toMatch(/^INVALID_TX: ARC 465: /);
    const updated = await call(
      api,
      'POST',
      `/api/v1/linkedrecords/${root.txId}/update?updateToken=${root.updateToken}`,
      { key: writerKey, body: 'after the refused one', contentType: 'application/octet-stream' },
    );
    expect(updated.status).toBe(200);
    const next = (updated.body as { txId: string }).txId;
    await eventually(async () => (await store.state(next)) === 'failed', 10_000, 50);
    expect((await store.meta(next))?.failure).toMatch(/^PREVIOUS_REJECTED/);
    return { root, next };
  };
  /** Confirmation passes, one after the other, until `done` (10 s at most). */
  const passesUntil = (done: () => Promise<boolean>) =>
    eventually(
      async () => {
        await publication.confirmOnce();
        return done();
      },
      10_000,
      100,
    );

  beforeAll(async () => {
    dev = await startArcDevnet({ redis: nodeRedis, prefix });
    proxy = await startArcRuleProxy(dev.node.url);
    api = await startApi({ prefix, fund: 0, env: { ...dev.env } });
    await dev.fund(100, 1000);
    writerKey = (await seedKey(api, { tenant: 'acme', permissions: ['Issuer_Admin'] })).rawKey;
    // The worker side talks to ARC through the proxy.
    worker = composePublicationSide({
      prefix,
      config: api.deps.config,
      pool: dev.pool,
      clock: api.deps.clock,
      logger,
      arcUrl: proxy.url,
    });
    ({ chain, publication } = worker);
    publication.startPublisher({ concurrency: 4, sweepEveryMs: 200, sweepAfterMs: 500 });
  });
  afterEach(() => {
    proxy.rule = () => 'forward';
  });
  afterAll(async () => {
    await closeDevnetSpec({ redis: nodeRedis, prefix, worker, api, proxy, dev });
  });

  it('a 400 about the request (no txid) fails no write: publication pauses (one warning, readiness), records stay pending with their inputs reserved, then publish', async () => {
    proxy.rule = (req) => (isSubmit(req) ? { status: 400, body: REQUEST_PROBLEM } : 'forward');
    const txIds = await Promise.all([1, 2, 3].map((i) => write(`paused ${i}`)));
    // Several attempts, each answered 400.
    await eventually(async () => proxy.requests.filter(isSubmit).length >= 9, 15_000, 50);
    await eventually(async () => (await readiness()).checks.publication === 'paused', 5000, 50);
    const ready = await readiness();
    expect(ready.status).toBe('ready'); // accepted writes wait in the outbox: serving stays right
    expect(ready.checks.publicationDetail).toContain('ARC 400');
    expect(await readPublicationPause(nodeRedis, prefix)).toMatchObject({ httpStatus: 400 });
    for (const txId of txIds) expect(await store.state(txId)).toBe('pending');
    expect(
      await nodeRedis.zscore((await store.keysFor(txIds[0] as string))!.outbox, txIds[0] as string),
    ).not.toBeNull();
    // Their inputs stay spent by their transactions (committed, unsettled): no other write gets them.
    const unsettled = (await dev.pool.unsettled(1000)).map((t) => t.txId);
    for (const txId of txIds) expect(unsettled).toContain(txId);
    expect(logged('publication paused')).toBe(1);
    expect(logged('record transaction rejected')).toBe(0);
    expect(logged('publication attempt failed')).toBe(0);

    proxy.rule = () => 'forward';
    await eventually(
      async () => (await Promise.all(txIds.map((t) => store.state(t)))).every((s) => s === 'published'),
      30_000,
      100,
    );
    expect((await readiness()).checks.publication).toBe('running');
    expect(await readPublicationPause(nodeRedis, prefix)).toBeNull();
    expect(logged('publication resumed')).toBe(1);
    // Change freed once a poll sees them SEEN_ON_NETWORK (after the node's time to SEEN).
    await eventually(
      async () => {
        await publication.confirmOnce();
        const settled = (await dev.pool.unsettled(1000)).map((t) => t.txId);
        return txIds.every((txId) => !settled.includes(txId));
      },
      10_000,
      100,
    );
  });

  it('DOUBLE_SPEND_ATTEMPTED is pending: the record stays published and watched, its change unspendable, and is confirmed once mined', async () => {
    const doubleSpend = { competingTxs: [COMPETING], extraInfo: 'double spend attempted' };
    // The node takes the transaction (it is the one mined later); ARC reports the double spend.
    const ours = new Set<string>();
    proxy.rule = (req) => {
      if (isSubmit(req)) {
        for (const t of submittedTxIds(req)) ours.add(t);
        return { rewrite: () => answerEach(req, 'DOUBLE_SPEND_ATTEMPTED', doubleSpend) };
      }
      const txId = statusQueryOf(req);
      if (txId === COMPETING) return ARC_UNKNOWN;
      if (txId && ours.has(txId))
        return { rewrite: () => ({ status: 200, body: statusEntry(txId, 'DOUBLE_SPEND_ATTEMPTED', doubleSpend) }) };
      return 'forward';
    };
    const txId = await write('double spend, then mined');
    await eventually(async () => (await store.state(txId)) === 'published', 10_000, 50);
    expect(await unsettled()).toContain(txId); // change not spendable, inputs kept
    expect(await chain.store.watched(100)).toContain(txId);
    const pass = await publication.confirmOnce();
    expect(pass).toMatchObject({ refused: 0, doubleSpends: 1 });
    expect(await statusOf(txId)).toMatchObject({ publication: 'published', confirmation: null });
    expect(await chain.store.watched(100)).toContain(txId);

    proxy.rule = () => 'forward';
    const block = await dev.node.mineBlock();
    expect((await publication.confirmOnce()).proven).toBeGreaterThanOrEqual(1);
    const s = await statusOf(txId);
    expect(s).toMatchObject({ publication: 'published', confirmation: { blockHash: block.hash } });
    expect(s.failure).toBeUndefined();
  });

  it('DOUBLE_SPEND_ATTEMPTED fails the record once a competing transaction is MINED; its inputs never go back to the pool', async () => {
    const doubleSpend = { competingTxs: [COMPETING], extraInfo: 'double spend attempted' };
    let competingMined = false;
    // This time the transaction never reaches the node: ARC answers for it.
    const ours = new Set<string>();
    proxy.rule = (req) => {
      if (isSubmit(req)) {
        for (const t of submittedTxIds(req)) ours.add(t);
        return answerEach(req, 'DOUBLE_SPEND_ATTEMPTED', doubleSpend);
      }
      const txId = statusQueryOf(req);
      if (txId === COMPETING)
        return competingMined ? { status: 200, body: statusEntry(COMPETING, 'MINED') } : ARC_UNKNOWN;
      if (txId && ours.has(txId))
        return { status: 200, body: statusEntry(txId, 'DOUBLE_SPEND_ATTEMPTED', doubleSpend) };
      return 'forward';
    };
    const txId = await write('double spend, competitor mined');
    await eventually(async () => (await store.state(txId)) === 'published', 10_000, 50);
    const inputs = await inputsOf(txId);
    expect(inputs.length).toBeGreaterThan(0);
    expect((await publication.confirmOnce()).doubleSpends).toBe(1);
    expect((await statusOf(txId)).publication).toBe('published');

    competingMined = true;
    expect(await publication.confirmOnce()).toMatchObject({ refused: 1, doubleSpends: 0 });
    const s = await statusOf(txId);
    expect(s.publication).toBe('failed');
    expect(s.failure).toMatch(/^DOUBLE_SPEND: .*competing c0c0.* MINED/);
    expect(await chain.store.watched(100)).not.toContain(txId);
    expect(await unsettled()).not.toContain(txId);
    const freeNow = await free();
    for (const input of inputs) expect(freeNow).not.toContain(input);
  });

  it('below SEEN_ON_NETWORK (X-WaitFor: STORED timed out or asked for): published, not yet seen; the change is freed when a poll sees it SEEN', async () => {
    // The node takes the transaction; ARC answers the status reached when X-WaitFor was met.
    const ours = new Set<string>();
    proxy.rule = (req) => {
      if (!isSubmit(req)) return 'forward';
      for (const t of submittedTxIds(req)) ours.add(t);
      return { rewrite: () => answerEach(req, 'STORED') };
    };
    const txId = await write('stored, not yet seen');
    await eventually(async () => (await store.state(txId)) === 'published', 10_000, 50);
    expect(proxy.requests.filter(isSubmit).every((r) => r.headers['x-waitfor'] === 'STORED')).toBe(true);
    expect(await unsettled()).toContain(txId); // change not spendable yet
    expect((await free()).some((o) => o.startsWith(`${txId}:`))).toBe(false);
    expect(await chain.store.watched(100)).toContain(txId);

    proxy.rule = () => 'forward';
    // polled until the node reports SEEN_ON_NETWORK (after its time to SEEN)
    await passesUntil(async () => !(await unsettled()).includes(txId));
    expect((await free()).some((o) => o.startsWith(`${txId}:`))).toBe(true); // its change
    expect(await statusOf(txId)).toMatchObject({ publication: 'published', confirmation: null });
  });

  it('a refusal is final only when the chain agrees: a record refused (465) and re-sent is mined and ends confirmed, its successor too; the pool never re-spends its inputs', async () => {
    const inputsOfTx = async (txId: string) => {
      const raw = (await store.publication(txId))?.rawTx;
      if (!raw) throw new Error(`no transaction for ${txId}`);
      return Transaction.fromBinary(Array.from(raw)).inputs.map((i) => `${i.sourceTXID}:${i.sourceOutputIndex}`);
    };
    // ARC refuses every submission with 465 naming the transaction (an operator charging more).
    proxy.rule = (req) =>
      isSubmit(req) ? refuseEach(req, 465, 'Fee too low', 'minimum expected fee is 2') : 'forward';
    const { root, next } = await refusedChain('refused, then mined');

    // 465 does not prove the transaction can never be mined: its inputs stay spent, it stays watched.
    const rootInputs = await inputsOfTx(root.txId);
    const nextInputs = (await inputsOfTx(next)).filter((op) => !op.startsWith(`${root.txId}:`));
    expect(await chain.store.watched(100)).toContain(root.txId);
    for (const op of [...rootInputs, ...nextInputs]) expect(await free()).not.toContain(op);
    expect(await unsettled()).toEqual(expect.arrayContaining([root.txId, next]));

    // Other writes meanwhile never spend them.
    proxy.rule = () => 'forward';
    const others = await Promise.all([1, 2, 3, 4].map((i) => write(`meanwhile ${i}`)));
    await eventually(
      async () => (await Promise.all(others.map((t) => store.state(t)))).every((st) => st === 'published'),
      10_000,
      50,
    );
    for (const t of others) for (const op of await inputsOfTx(t)) expect(rootInputs).not.toContain(op);

    // The next pass asks ARC: unknown, so the same bytes are sent again, and ARC takes them now,
    // answering below SEEN_ON_NETWORK (the node's time to SEEN): held, as a first broadcast
    // answered so publishes a record, so that pass publishes it again at once and frees nothing.
    const pass = await publication.confirmOnce();
    expect(pass.rebroadcast).toBeGreaterThanOrEqual(1);
    expect(await store.state(root.txId)).toBe('published');
    expect((await store.meta(root.txId))?.failure).toBeNull();
    expect(await unsettled()).toContain(root.txId);
    expect((await free()).some((o) => o.startsWith(`${root.txId}:`))).toBe(false);
    // Its successor, failed only because of it, is published too (back in the outbox).
    await eventually(async () => (await store.state(next)) === 'published', 10_000, 50);
    expect((await store.meta(next))?.failure).toBeNull();

    const block = await dev.node.mineBlock();
    await eventually(
      async () => {
        await publication.confirmOnce();
        const watched = await chain.store.watched(100);
        return !watched.includes(root.txId) && !watched.includes(next);
      },
      10_000,
      100,
    );
    for (const t of [root.txId, next]) {
      const s = (await call(api, 'GET', `/api/v1/linkedrecords/${t}/status`, { key: writerKey })).body as {
        publication: string;
        failure?: string;
        confirmation: { blockHash: string } | null;
      };
      expect(s).toMatchObject({ publication: 'published', confirmation: { blockHash: block.hash } });
      expect(s.failure).toBeUndefined();
    }
    expect(await unsettled()).not.toContain(root.txId);
    for (const op of rootInputs) expect(await free()).not.toContain(op);
  });

  it('a refused record that a poll finds held below SEEN_ON_NETWORK is published again by that pass; its change waits for SEEN', async () => {
    proxy.rule = (req) =>
      isSubmit(req) ? refuseEach(req, 465, 'Fee too low', 'minimum expected fee is 2') : 'forward';
    const txId = await write('refused, then held');
    await eventually(async () => (await store.state(txId)) === 'failed', 10_000, 50);
    // Another broadcast reached ARC meanwhile: it holds the transaction, not yet seen.
    proxy.rule = (req) =>
      statusQueryOf(req) === txId ? { status: 200, body: statusEntry(txId, 'ACCEPTED_BY_NETWORK') } : 'forward';
    const revivals = logged('a refused record transaction is held by ARC after all');
    await publication.confirmOnce();
    expect(await statusOf(txId)).toMatchObject({ publication: 'published', confirmation: null });
    expect(await unsettled()).toContain(txId);
    expect((await free()).some((o) => o.startsWith(`${txId}:`))).toBe(false);
    expect(logged('a refused record transaction is held by ARC after all')).toBe(revivals + 1);

    // ARC did not in fact hold it (the proxy answered for it): unknown, re-sent, seen, mined.
    proxy.rule = () => 'forward';
    await passesUntil(async () => !(await unsettled()).includes(txId));
    const block = await dev.node.mineBlock();
    await passesUntil(async () => (await statusOf(txId)).confirmation?.blockHash === block.hash);
  });

  it('a refusal proving the transaction never minable (461) releases its inputs at once and stops watching it', async () => {
    proxy.rule = (req) =>
      isSubmit(req) ? refuseEach(req, 461, 'Malformed transaction', 'script execution failed') : 'forward';
    const txId = await write('never minable');
    await eventually(async () => (await store.state(txId)) === 'failed', 10_000, 50);
    expect(await chain.store.watched(100)).not.toContain(txId);
    expect(await unsettled()).not.toContain(txId);
  });

  describe('REJECTED for a transient reason is re-sent once', () => {
    /** ARC's extraInfo for a peer's REJECT (metamorph message_handler.go). */
    const byPeer = (reason: string) => `transaction rejected by peer\npeer: 127.0.0.1:18333 reason: ${reason}`;
    const rejected = (txId: string, reason: string) => ({
      rewrite: () => ({ status: 200, body: statusEntry(txId, 'REJECTED', { extraInfo: byPeer(reason) }) }),
    });
    const submitsOf = (txId: string) =>
      proxy.requests.filter((req) => isSubmit(req) && submittedTxIds(req).includes(txId)).length;
    const inputsOfTx = async (txId: string) => {
      const raw = (await store.publication(txId))?.rawTx;
      if (!raw) throw new Error(`no transaction for ${txId}`);
      return Transaction.fromBinary(Array.from(raw)).inputs.map((i) => `${i.sourceTXID}:${i.sourceOutputIndex}`);
    };

    it('too-long-mempool-chain: left published and watched, re-sent once after the next block, then mined: confirmed', async () => {
      let txId = '';
      let rejecting = true;
      proxy.rule = (req) => {
        const q = statusQueryOf(req);
        return rejecting && q !== null && q === txId ? rejected(q, 'too-long-mempool-chain') : 'forward';
      };
      txId = await write('past the ancestor limit');
      await eventually(async () => (await store.state(txId)) === 'published', 10_000, 50);

      expect(await publication.confirmOnce()).toMatchObject({ transientRejects: 1, resentRejected: 0 });
      expect(await statusOf(txId)).toMatchObject({ publication: 'published', confirmation: null });
      expect(await chain.store.watched(100)).toContain(txId);
      expect(submitsOf(txId)).toBe(1);
      // Not due before a block (or the delay): asked again, not re-sent.
      expect(await publication.confirmOnce()).toMatchObject({ transientRejects: 1, resentRejected: 0 });
      expect(submitsOf(txId)).toBe(1);

      // The ancestors are mined: the same bytes go once more, and the node has it.
      const block = await dev.node.mineBlock();
      expect(await publication.confirmOnce()).toMatchObject({ resentRejected: 1 });
      expect(submitsOf(txId)).toBe(2);
      rejecting = false;
      await passesUntil(async () => (await statusOf(txId)).confirmation !== null);
      expect(await statusOf(txId)).toMatchObject({ publication: 'published', confirmation: { blockHash: block.hash } });
      expect(submitsOf(txId)).toBe(2);
      expect(await nodeRedis.hexists(arcKeys(prefix).of(txId).transientResent, txId)).toBe(0);
    });

    it('a second REJECTED after the one re-broadcast is final: the record fails, unwatched, its inputs never handed back', async () => {
      let txId = '';
      const sent = new Set<string>();
      // ARC took it (the node never did) and then relays the peers' REJECT, to the poll and to the re-send.
      proxy.rule = (req) => {
        if (isSubmit(req) && submittedTxIds(req).every((t) => !sent.has(t))) {
          for (const t of submittedTxIds(req)) sent.add(t);
          return answerEach(req, 'SEEN_ON_NETWORK');
        }
        if (isSubmit(req)) {
          const entries = submittedTxIds(req).map((t) =>
            statusEntry(t, 'REJECTED', { extraInfo: byPeer('too-long-mempool-chain') }),
          );
          return { status: 200, body: req.path === '/v1/txs' ? entries : entries[0] };
        }
        const q = statusQueryOf(req);
        return q !== null && q === txId ? rejected(q, 'too-long-mempool-chain') : 'forward';
      };
      txId = await write('rejected twice');
      await eventually(async () => (await store.state(txId)) === 'published', 10_000, 50);
      const inputs = await inputsOfTx(txId);

      expect(await publication.confirmOnce()).toMatchObject({ transientRejects: 1, refused: 0 });
      expect(await store.state(txId)).toBe('published');
      await dev.node.mineBlock();
      expect(await publication.confirmOnce()).toMatchObject({ resentRejected: 1, refused: 1 });
      expect(submitsOf(txId)).toBe(2);
      expect(await store.state(txId)).toBe('failed');
      expect((await store.meta(txId))?.failure).toMatch(/too-long-mempool-chain/);
      expect(await chain.store.watched(100)).not.toContain(txId);
      for (const op of inputs) expect(await free()).not.toContain(op);
      // Settled for good: the next pass neither asks nor sends it again.
      await publication.confirmOnce();
      expect(submitsOf(txId)).toBe(2);
    });

    it('a REJECTED for any other reason is final at once, never re-sent', async () => {
      let txId = '';
      proxy.rule = (req) => {
        if (isSubmit(req)) return answerEach(req, 'SEEN_ON_NETWORK');
        const q = statusQueryOf(req);
        return q !== null && q === txId ? rejected(q, 'bad-txns-vout-negative') : 'forward';
      };
      txId = await write('rejected for good');
      await eventually(async () => (await store.state(txId)) === 'published', 10_000, 50);
      expect(await publication.confirmOnce()).toMatchObject({ transientRejects: 0, resentRejected: 0, refused: 1 });
      expect(await store.state(txId)).toBe('failed');
      expect(await chain.store.watched(100)).not.toContain(txId);
      expect(submitsOf(txId)).toBe(1);
    });
  });

  it('an orphan past ARC_ORPHAN_MAX_BLOCKS (6) is escalated once (logged, counted, re-sent), and after 6 more blocks read as refused, still watched', async () => {
    let txId = '';
    const submits = () => proxy.requests.filter((req) => isSubmit(req) && submittedTxIds(req).includes(txId)).length;
    const stored = new Set<string>();
    // ARC stored it, then a peer keeps lacking a parent; the node never gets it.
    proxy.rule = (req) => {
      if (isSubmit(req)) {
        const first = submittedTxIds(req).every((t) => !stored.has(t));
        for (const t of submittedTxIds(req)) stored.add(t);
        return answerEach(req, first ? 'STORED' : 'SEEN_IN_ORPHAN_MEMPOOL');
      }
      const q = statusQueryOf(req);
      return q !== null && q === txId
        ? { rewrite: () => ({ status: 200, body: statusEntry(q, 'SEEN_IN_ORPHAN_MEMPOOL') }) }
        : 'forward';
    };
    txId = await write('an orphan for good');
    await eventually(async () => (await store.state(txId)) === 'published', 10_000, 50);
    const mine = async (n: number) => {
      for (let i = 0; i < n; i++) await dev.node.mineBlock();
    };
    const escalations = async () => Number((await nodeRedis.get(arcKeys(prefix).orphanEscalations)) ?? 0);
    const before = await escalations();

    expect(await publication.confirmOnce()).toMatchObject({ orphansEscalated: 0 });
    await mine(6);
    expect(await publication.confirmOnce()).toMatchObject({ orphansEscalated: 0 });
    expect(submits()).toBe(1);
    await mine(1);
    expect(await publication.confirmOnce()).toMatchObject({ orphansEscalated: 1, refused: 0 });
    expect(submits()).toBe(2);
    expect(await escalations()).toBe(before + 1);
    expect(
      lines.filter((l) => l.includes('escalated') && l.includes(txId) && l.includes('missingParents')),
    ).toHaveLength(1);
    expect(await store.state(txId)).toBe('published');
    // Once only.
    await mine(6);
    expect(await publication.confirmOnce()).toMatchObject({ orphansEscalated: 0 });
    expect(submits()).toBe(2);
    expect(await store.state(txId)).toBe('published');

    await mine(1);
    expect(await publication.confirmOnce()).toMatchObject({ orphansEscalated: 0, undecided: 1 });
    expect(await store.state(txId)).toBe('failed');
    expect((await store.meta(txId))?.failure).toMatch(/SEEN_IN_ORPHAN_MEMPOOL/);
    // Not final: still watched, its inputs stay spent (the refusal bound settles it).
    expect(await chain.store.watched(100)).toContain(txId);
    expect(await escalations()).toBe(before + 1);
  });

  it('below SEEN_ON_NETWORK, then proven by a MINED callback before any poll: the next pass still frees its change', async () => {
    proxy.rule = (req) => (isSubmit(req) ? { rewrite: () => answerEach(req, 'STORED') } : 'forward');
    const txId = await write('stored, then proven by a callback');
    await eventually(async () => (await store.state(txId)) === 'published', 10_000, 50);
    expect(await unsettled()).toContain(txId);
    proxy.rule = () => 'forward';
    const block = await dev.node.mineBlock();
    // ARC's MINED callback, as the callback route hands it on: verified, stored, unwatched.
    const mined = (await (await fetch(`${dev.node.url}/v1/tx/${txId}`)).json()) as Record<string, unknown>;
    const token = 'callback-token-0123456789abcdef';
    const handled = await handleArcCallback(
      { headers: chain.headers, store: chain.store, token },
      { ...mined, txid: txId },
      `Bearer ${token}`,
    );
    expect(handled).toMatchObject({ httpStatus: 200, proven: [txId] });
    expect(await chain.store.watched(100)).not.toContain(txId);
    expect(await unsettled()).toContain(txId);

    await publication.confirmOnce();
    expect(await unsettled()).not.toContain(txId);
    expect((await free()).some((o) => o.startsWith(`${txId}:`))).toBe(true);
    expect(await statusOf(txId)).toMatchObject({ publication: 'published', confirmation: { blockHash: block.hash } });
  });

  it('a MINED callback batch settles what it proves together: the funding of every record confirmed, the failed one published again with its successor', async () => {
    // The node takes every submission; ARC's answers say 465 for the first record, then STORED.
    proxy.rule = (req) =>
      isSubmit(req) ? { rewrite: () => refuseEach(req, 465, 'Fee too low', 'minimum expected fee is 2') } : 'forward';
    const { root, next } = await refusedChain('refused, then proven by a callback');

    proxy.rule = (req) => (isSubmit(req) ? { rewrite: () => answerEach(req, 'STORED') } : 'forward');
    const held = await Promise.all([1, 2, 3].map((i) => write(`held, then proven by a callback ${i}`)));
    await eventually(
      async () => (await Promise.all(held.map((t) => store.state(t)))).every((st) => st === 'published'),
      10_000,
      50,
    );
    const proven = [root.txId, ...held];
    expect(await unsettled()).toEqual(expect.arrayContaining([...proven, next]));
    // The change each one's confirmation frees ('outpoint=satoshis' in the pool).
    const changes = (await dev.pool.unsettled(1000))
      .filter((t) => proven.includes(t.txId))
      .flatMap((t) => t.outputs.map((pair) => pair.split('=')[0] as string));
    expect(changes.length).toBeGreaterThanOrEqual(proven.length);
    proxy.rule = () => 'forward';
    const block = await dev.node.mineBlock();

    // ARC's batch of MINED callbacks, through the route's receiver and queue to the arc-callbacks worker.
    const callbacks = await Promise.all(
      proven.map(async (txId) => ({
        ...((await (await fetch(`${dev.node.url}/v1/tx/${txId}`)).json()) as Record<string, unknown>),
        txid: txId,
      })),
    );
    const revivals = logged('a refused record transaction was seen on the network after all');
    await worker.startCallbacks();
    const token = 'callback-token-0123456789abcdef';
    const queue = arcCallbackQueue(worker.bull, prefix);
    try {
      const received = await arcCallbackReceiver({ token, queue }).receive(
        { count: callbacks.length, callbacks },
        `Bearer ${token}`,
      );
      expect(received).toMatchObject({ httpStatus: 200, answer: { queued: proven.length } });
    } finally {
      await queue.close();
    }
    await eventually(async () => !(await unsettled()).some((t) => proven.includes(t)), 10_000, 50);

    // No pass ran: the batch alone proved, freed the change of every record and revived the refused one.
    expect(await free()).toEqual(expect.arrayContaining(changes));
    const watched = await chain.store.watched(100);
    for (const txId of proven) {
      expect(watched).not.toContain(txId);
      expect(await statusOf(txId, txId === root.txId ? 'linkedrecords' : 'records')).toMatchObject({
        publication: 'published',
        confirmation: { blockHash: block.hash },
      });
    }
    expect((await store.meta(root.txId))?.failure).toBeNull();
    expect(logged('a refused record transaction was seen on the network after all')).toBe(revivals + 1);
    // Its successor, failed only because of it, went back to pending and is published now.
    await eventually(async () => (await store.state(next)) === 'published', 10_000, 50);
    expect((await store.meta(next))?.failure).toBeNull();
  });
});
