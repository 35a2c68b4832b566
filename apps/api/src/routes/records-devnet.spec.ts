import { createHash } from 'node:crypto';
import { MerklePath, Spend, Transaction } from '@bsv/sdk';
import { confirmationOptions } from '@proofline/chain-arc';
import type { ArcChain, RunningConfirmationWorker } from '@proofline/chain-arc';
import { startArcDevnet } from '@proofline/devnet-testing';
import type { ArcDevnet } from '@proofline/devnet-testing';
import { RecordStore } from '@proofline/records-data-access';
import type { Publication } from '@proofline/records-publication';
import { composePublicationSide } from '@proofline/records-publication-testing';
import type { PublicationSide } from '@proofline/records-publication-testing';
import { createLogger } from '@proofline/shared-logger';
import { newDeploymentPartitions } from '@proofline/shared-redis';
import type { Confirmation, StatusResult } from '@proofline/records-domain';
import { eventually, freePort, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { call, closeDevnetSpec, seedKey, startApi } from '../testing/harness';
import type { RunningApi } from '../testing/harness';

// Records published over real HTTP to the devnet node's ARC API by the real publisher (batched,
// funded from the wallet's pool), proven by the confirmation worker (polling) and by ARC callbacks
// on the API's POST /arc/callback, with the node's fault switches: callbacks lost or duplicated,
// ARC down, transactions rejected, a corrupted BUMP, a reorg of the last block.

const sha = (b: Buffer) => createHash('sha256').update(b).digest();
const sha256d = (b: Buffer) => sha(sha(b));
const TOKEN = 'callback-token-0123456789abcdef';

type Status = StatusResult;

/** Independent TSC check: fold the nodes from the leaf and compare with the header's Merkle root. */
function verifyIndependently(txId: string, c: Confirmation): void {
  const header = Buffer.from(c.merkleProof.target, 'hex');
  expect(header).toHaveLength(80);
  expect(c.blockHash).toBe(Buffer.from(sha256d(header)).reverse().toString('hex'));
  expect(c.merkleProof).toMatchObject({ txOrId: txId, targetType: 'header', proofType: 'branch', composite: false });
  let running = Buffer.from(txId, 'hex').reverse();
  let index = c.merkleProof.index;
  for (const node of c.merkleProof.nodes) {
    const sibling = node === '*' ? running : Buffer.from(node, 'hex').reverse();
    running = index % 2 === 1 ? sha256d(Buffer.concat([sibling, running])) : sha256d(Buffer.concat([running, sibling]));
    index = Math.floor(index / 2);
  }
  expect(index).toBe(0);
  expect(running.equals(header.subarray(36, 68))).toBe(true);
  expect(new Date(c.blockTimestamp).getTime() / 1000).toBe(header.readUInt32LE(68));
}

jest.setTimeout(60_000);

describe('records over ARC on the devnet node (real HTTP between workers, API and node)', () => {
  const prefix = uniquePrefix('recarc');
  const logger = createLogger({ level: 'silent', name: 'test' });
  const nodeRedis = testRedisClient({ maxRetriesPerRequest: null });
  const store = new RecordStore(nodeRedis, prefix, { partitions: newDeploymentPartitions(nodeRedis) });
  let dev: ArcDevnet;
  let api: RunningApi;
  let worker: PublicationSide;
  let chain: ArcChain;
  let publication: Publication;
  let confirmations: RunningConfirmationWorker | null = null;
  let writerKey: string;

  const startPolling = async (options: { pollAfterMs?: number } = {}) => {
    confirmations ??= await publication.startConfirmations(options);
  };
  const stopPolling = async () => {
    await confirmations?.close();
    confirmations = null;
  };
  const write = async (path: string, body: string): Promise<{ txId: string; updateToken?: string }> => {
    const res = await call(api, 'POST', path, { key: writerKey, body, contentType: 'application/octet-stream' });
    expect(res.status).toBe(200);
    return res.body as { txId: string; updateToken?: string };
  };
  const statusOf = async (txId: string, family = 'records'): Promise<Status> =>
    (await call(api, 'GET', `/api/v1/${family}/${txId}/status`, { key: writerKey })).body as Status;
  const arcStatus = async (txId: string) =>
    (await (await fetch(`${dev.node.url}/v1/tx/${txId}`)).json()) as {
      txStatus: string;
      blockHash: string;
      merklePath: string;
    };

  beforeAll(async () => {
    dev = await startArcDevnet({ redis: nodeRedis, prefix });
    const port = await freePort();
    api = await startApi({
      prefix,
      port,
      fund: 0,
      env: { ...dev.env, ARC_CALLBACK_URL: `http://127.0.0.1:${port}/arc/callback`, ARC_CALLBACK_TOKEN: TOKEN },
    });
    await dev.fund(200, 1000);
    writerKey = (await seedKey(api, { tenant: 'acme', permissions: ['Issuer_Admin'] })).rawKey;
    // The worker side, as apps/worker wires it: its own connections, ARC with the callback headers,
    // the callbacks the API queues proven (and settled) as the worker's arc-callbacks role does.
    worker = composePublicationSide({ prefix, config: api.deps.config, pool: dev.pool, clock: api.deps.clock, logger });
    ({ chain, publication } = worker);
    publication.startPublisher({ concurrency: 8, sweepEveryMs: 200, sweepAfterMs: 500 });
    await worker.startCallbacks();
  });
  afterEach(() => {
    Object.assign(dev.node.faults, {
      arcStatus: undefined,
      dropCallbacks: false,
      duplicateCallbacks: false,
      corruptBump: false,
      rejectAll: undefined,
    });
  });
  afterAll(async () => {
    await stopPolling();
    await closeDevnetSpec({ redis: nodeRedis, prefix, worker, api, dev });
  });

  it('ARC callbacks alone prove a record and settle its funding (no polling); a callback with a wrong token is 401 and ignored', async () => {
    const unsettled = async () => (await dev.pool.unsettled(1000)).map((t) => t.txId);
    const rec = await write('/api/v1/records?encode=SHA256', 'by callback');
    await eventually(async () => (await store.state(rec.txId)) === 'published', 10_000);
    // Answered below SEEN_ON_NETWORK (the node's time to SEEN): held, its change not freed yet.
    expect(await unsettled()).toContain(rec.txId);
    const block = await dev.node.mineBlock();
    await eventually(async () => (await statusOf(rec.txId)).confirmation !== null, 10_000, 50);
    const s = await statusOf(rec.txId);
    expect(s.confirmation).toMatchObject({ blockHash: block.hash, confirmedBlocks: 1 });
    // The callback that proved it settled its funding too: no poll will ever ask about it.
    await eventually(async () => !(await unsettled()).includes(rec.txId), 5000, 50);
    verifyIndependently(rec.txId, s.confirmation as Confirmation);

    const forged = {
      txid: rec.txId,
      txStatus: 'MINED',
      blockHash: block.hash,
      blockHeight: block.height,
      merklePath: (await arcStatus(rec.txId)).merklePath,
    };
    const wrong = await fetch(`${api.baseUrl}/arc/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer not-the-token' },
      body: JSON.stringify(forged),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(await wrong.json()).toMatchObject({ errorCode: 'ARC_CALLBACK_UNAUTHORIZED', status: 401 });
    const bad = await fetch(`${api.baseUrl}/arc/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: '{"txid":"nope"}',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ errorCode: 'ARC_CALLBACK_INVALID' });
  });

  it('lost callbacks: polling still confirms; duplicated callbacks change nothing; a corrupted BUMP is refused, then proven', async () => {
    dev.node.faults.dropCallbacks = true;
    const lost = await write('/api/v1/records', 'callback lost');
    await eventually(async () => (await store.state(lost.txId)) === 'published', 10_000);
    const first = await dev.node.mineBlock();
    await new Promise((r) => setTimeout(r, 300));
    expect((await statusOf(lost.txId)).confirmation).toBeNull(); // no callback, no poll yet
    // a corrupted BUMP: the poll refuses it and stores nothing
    dev.node.faults.corruptBump = true;
    await startPolling();
    await eventually(async () => (await chain.store.tip())?.hash === first.hash, 10_000, 50);
    await new Promise((r) => setTimeout(r, 300));
    expect((await statusOf(lost.txId)).confirmation).toBeNull();
    dev.node.faults.corruptBump = false;
    await eventually(async () => (await statusOf(lost.txId)).confirmation !== null, 10_000, 50);
    verifyIndependently(lost.txId, (await statusOf(lost.txId)).confirmation as Confirmation);

    dev.node.faults.dropCallbacks = false;
    dev.node.faults.duplicateCallbacks = true;
    const twice = await write('/api/v1/records', 'callback twice');
    await eventually(async () => (await store.state(twice.txId)) === 'published', 10_000);
    const block = await dev.node.mineBlock();
    await eventually(async () => (await statusOf(twice.txId)).confirmation !== null, 10_000, 50);
    const s = await statusOf(twice.txId);
    expect(s.confirmation?.blockHash).toBe(block.hash);
    verifyIndependently(twice.txId, s.confirmation as Confirmation);
    expect(await chain.store.txIdsOfBlock(block.hash)).toEqual([twice.txId]);
  });

  it('ARC_CALLBACK_GRACE_MS: polling leaves a young transaction to its callback and asks for it once the grace is over', async () => {
    await stopPolling();
    await startPolling(
      confirmationOptions({
        arcCallbackUrl: 'http://127.0.0.1/arc/callback',
        arcCallbackToken: TOKEN,
        callbackGraceMs: 2500,
      }),
    );
    try {
      // Its callback is lost: within the grace no poll asks for it, after it one does.
      dev.node.faults.dropCallbacks = true;
      const lost = await write('/api/v1/records', 'callback lost, grace');
      await eventually(async () => (await store.state(lost.txId)) === 'published', 10_000);
      const publishedAt = Date.now();
      const first = await dev.node.mineBlock();
      await eventually(async () => (await chain.store.tip())?.hash === first.hash, 10_000, 50); // passes run
      await new Promise((r) => setTimeout(r, 500));
      expect(Date.now() - publishedAt).toBeLessThan(2000);
      expect((await statusOf(lost.txId)).confirmation).toBeNull();
      expect(await chain.store.watched(10, 2500)).not.toContain(lost.txId);
      expect(await chain.store.watched(10)).toContain(lost.txId);
      await eventually(async () => (await statusOf(lost.txId)).confirmation !== null, 15_000, 100);
      expect(Date.now() - publishedAt).toBeGreaterThanOrEqual(2000);
      verifyIndependently(lost.txId, (await statusOf(lost.txId)).confirmation as Confirmation);

      // Its callback arrives: proven within the grace, with no poll.
      dev.node.faults.dropCallbacks = false;
      const called = await write('/api/v1/records', 'callback arrives, grace');
      await eventually(async () => (await store.state(called.txId)) === 'published', 10_000);
      const t0 = Date.now();
      const block = await dev.node.mineBlock();
      await eventually(async () => (await statusOf(called.txId)).confirmation !== null, 10_000, 50);
      expect(Date.now() - t0).toBeLessThan(2500);
      expect((await statusOf(called.txId)).confirmation?.blockHash).toBe(block.hash);
    } finally {
      await stopPolling();
    }
  });

  it('a linked chain and independent records, published in batches, confirm with proofs that match the node; every input verifies with the sdk interpreter', async () => {
    await startPolling();
    const created = await write('/api/v1/linkedrecords?encode=SHA256', 'v1');
    const updated = await write(
      `/api/v1/linkedrecords/${created.txId}/update?updateToken=${created.updateToken}`,
      'v2',
    );
    const independents = await Promise.all(
      Array.from({ length: 20 }, (_, i) => write('/api/v1/records?encode=Base64', `alone ${i}`)),
    );
    const all = [created.txId, updated.txId, ...independents.map((r) => r.txId)];
    await eventually(
      async () => (await Promise.all(all.map((t) => store.state(t)))).every((s) => s === 'published'),
      20_000,
      50,
    );
    expect(chain.publisher.sent.some((n) => n > 1)).toBe(true); // concurrent jobs went out as POST /v1/txs

    // every input of every published transaction, checked by the sdk's interpreter against the output it spends
    const known = new Map<string, string>();
    const hexOf = (rawTx: Uint8Array | undefined) => (rawTx ? Buffer.from(rawTx).toString('hex') : undefined);
    for (const t of all) known.set(t, hexOf((await store.publication(t))?.rawTx) ?? '');
    for (const t of all) {
      const tx = Transaction.fromHex(known.get(t) ?? '');
      expect(tx.id('hex')).toBe(t);
      for (const [i, input] of tx.inputs.entries()) {
        // the parent: a record (its link output, or change that went back to the pool) or a funding split
        const parentHex =
          known.get(input.sourceTXID ?? '') ??
          hexOf((await store.publication(input.sourceTXID ?? ''))?.rawTx) ??
          dev.splitHex(input.sourceTXID ?? '');
        const source = Transaction.fromHex(parentHex).outputs[input.sourceOutputIndex]!;
        const spend = new Spend({
          sourceTXID: input.sourceTXID!,
          sourceOutputIndex: input.sourceOutputIndex,
          sourceSatoshis: source.satoshis!,
          lockingScript: source.lockingScript,
          transactionVersion: tx.version,
          otherInputs: tx.inputs.filter((_, j) => j !== i),
          outputs: tx.outputs,
          inputIndex: i,
          unlockingScript: input.unlockingScript!,
          inputSequence: input.sequence ?? 0xffffffff,
          lockTime: tx.lockTime,
        });
        expect(spend.validate()).toBe(true);
      }
    }

    const block = await dev.node.mineBlock();
    await eventually(
      async () =>
        (
          await Promise.all(
            all.map((t) => statusOf(t, t === created.txId || t === updated.txId ? 'linkedrecords' : 'records')),
          )
        ).every((s) => s.confirmation !== null),
      20_000,
      100,
    );
    for (const t of all) {
      const s = await statusOf(t, t === created.txId || t === updated.txId ? 'linkedrecords' : 'records');
      expect(s.publication).toBe('published');
      expect(s.confirmation?.blockHash).toBe(block.hash);
      verifyIndependently(t, s.confirmation as Confirmation);
      // the node's GET /v1/tx answers MINED with the same blockHash and a BUMP computing that block's root
      const arc = await arcStatus(t);
      expect(arc).toMatchObject({ txStatus: 'MINED', blockHash: s.confirmation?.blockHash });
      const root = Buffer.from(s.confirmation!.merkleProof.target, 'hex').subarray(36, 68).reverse().toString('hex');
      expect(MerklePath.fromHex(arc.merklePath).computeRoot(t)).toBe(root);
    }
    // confirmations grow as the node mines
    const before = (await statusOf(updated.txId, 'linkedrecords')).confirmation?.confirmedBlocks ?? 0;
    await dev.node.mineBlock();
    await eventually(
      async () => ((await statusOf(updated.txId, 'linkedrecords')).confirmation?.confirmedBlocks ?? 0) === before + 1,
      10_000,
      50,
    );
  });

  it('ARC down for a while (503): records wait (status pending), nothing is lost, all are published and proven after recovery', async () => {
    await startPolling();
    dev.node.faults.arcStatus = 503;
    const recs = await Promise.all(Array.from({ length: 5 }, (_, i) => write('/api/v1/records', `while down ${i}`)));
    await new Promise((r) => setTimeout(r, 1500)); // several attempts fail meanwhile
    for (const r of recs) expect(await statusOf(r.txId)).toMatchObject({ publication: 'pending', confirmation: null });
    dev.node.faults.arcStatus = undefined;
    await eventually(
      async () => (await Promise.all(recs.map((r) => store.state(r.txId)))).every((s) => s === 'published'),
      30_000,
      100,
    );
    const block = await dev.node.mineBlock();
    await eventually(
      async () =>
        (await Promise.all(recs.map((r) => statusOf(r.txId)))).every((s) => s.confirmation?.blockHash === block.hash),
      15_000,
      100,
    );
  });

  it('a rejected transaction: the record fails with ARC’s code and reason, in status and in /metrics; its funding stays spent while it may still be mined', async () => {
    dev.node.faults.rejectAll = { code: 465, detail: 'fee too low for the test' };
    const rec = await write('/api/v1/records', 'refused');
    await eventually(async () => (await store.state(rec.txId)) === 'failed', 15_000, 50);
    const s = await statusOf(rec.txId);
    expect(s).toMatchObject({ publication: 'failed', confirmation: null });
    expect(s.failure).toMatch(/^INVALID_TX: ARC 465: .*fee too low for the test/);
    const metrics = await (await fetch(`${api.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/proofline_arc_rejected_transactions\{[^}]*code="465"[^}]*\} 1/);
    // 465 does not prove the transaction can never be mined (another send, another miner's fee
    // policy): its input is not handed back, the transaction stays watched until the chain decides
    const committed = (await dev.pool.unsettled(1000)).find((t) => t.txId === rec.txId);
    expect(committed?.inputs.length).toBeGreaterThan(0);
    const free = new Set((await dev.pool.freeOutpoints()).keys());
    for (const op of committed?.inputs ?? []) expect(free.has(op)).toBe(false);
    expect(await chain.store.watched(1000)).toContain(rec.txId);
  });

  it('a reorg of the last block: the record goes back to waiting and gets a new proof in the new block', async () => {
    await startPolling();
    const rec = await write('/api/v1/records', 'reorged');
    await eventually(async () => (await store.state(rec.txId)) === 'published', 10_000);
    const mined = await dev.node.mineBlock();
    await eventually(async () => (await statusOf(rec.txId)).confirmation?.blockHash === mined.hash, 10_000, 50);
    const reorg = await dev.node.reorgLastBlock();
    expect(reorg.oldHash).toBe(mined.hash);
    await eventually(async () => (await statusOf(rec.txId)).confirmation?.blockHash === reorg.newHash, 15_000, 50);
    const s = await statusOf(rec.txId);
    verifyIndependently(rec.txId, s.confirmation as Confirmation);
    expect(await arcStatus(rec.txId)).toMatchObject({ txStatus: 'MINED', blockHash: reorg.newHash });
  });
});
