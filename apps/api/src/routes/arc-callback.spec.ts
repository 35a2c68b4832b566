import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue, Worker } from 'bullmq';
import { ARC_CALLBACK_BODY_LIMIT, startArcCallbackWorker } from '@proofline/chain-arc';
import type { ArcChain, RunningArcCallbackWorker } from '@proofline/chain-arc';
import { tscToMerklePath } from '@proofline/chain-bsv';
import { REGTEST_BITS, merkleBranches, mineHeader, parseHeader } from '@proofline/chain-domain';
import { callbackBody } from '@proofline/devnet';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import { createLogger } from '@proofline/shared-logger';
import { createRedis, deleteByPrefix } from '@proofline/shared-redis';
import { eventually, freePort, testBullRedis, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { startApi } from '../testing/harness';
import type { RunningApi } from '../testing/harness';

// POST /arc/callback answers once the batch is a BullMQ job and verifies nothing itself; the
// arc-callbacks worker proves the job against a headers source this spec serves (WhatsOnChain's
// paths, on 127.0.0.1) and can make slow or unavailable.

const TOKEN = 'callback-token-0123456789abcdef';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

interface Block {
  readonly hash: string;
  readonly height: number;
  readonly headerHex: string;
  readonly txIds: string[];
  /** ARC's callback items (the devnet node's shape): MINED with the BUMP of each txId. */
  readonly callbacks: Record<string, unknown>[];
}

/**
 * A block of 2^`depth` transactions in which `count` consecutive ones are ours, with a MINED
 * callback each, as ARC sends them: every BUMP has `depth` levels (a block of a million
 * transactions at depth 20), its offsets in the middle of the block (multi-byte varints).
 */
function minedBlock(label: string, count: number, depth = 20, height = 900_000): Block {
  const txIds = Array.from({ length: count }, (_, i) => sha(`${label} tx ${i}`));
  const width = 2 ** Math.ceil(Math.log2(Math.max(2, count)));
  const fillers = Array.from({ length: width - count }, (_, i) => sha(`${label} filler ${i}`));
  const { branches } = merkleBranches([...txIds, ...fillers]);
  const upper = Array.from({ length: depth - Math.log2(width) }, (_, l) => sha(`${label} upper ${l}`));
  const base = Math.floor(2 ** depth / 3 / width) * width;
  const paths = txIds.map((txId, i) =>
    tscToMerklePath(
      {
        index: base + i,
        txOrId: txId,
        target: '',
        nodes: [...branches[i]!, ...upper],
        targetType: 'header',
        proofType: 'branch',
        composite: false,
      },
      height,
    ),
  );
  const mined = mineHeader({
    version: 0x20000000,
    prevHash: sha(`${label} prev`),
    merkleRoot: paths[0]!.computeRoot(txIds[0]!),
    time: 1_790_000_000,
    bits: REGTEST_BITS,
    nonce: 0,
  });
  const now = new Date();
  const callbacks = txIds.map((txid, i) =>
    callbackBody(
      {
        txid,
        txStatus: 'MINED',
        blockHash: mined.hash,
        blockHeight: height,
        merklePath: paths[i]!.toHex(),
        extraInfo: '',
        competingTxs: null,
      },
      now,
    ),
  );
  return { hash: mined.hash, height, headerHex: mined.hex, txIds, callbacks };
}

type HeadersMode = 'up' | 'down' | 'hang';

/** WhatsOnChain's `/chain/info` and `/block/{hash}/header` for the blocks added, or 503, or no answer. */
async function startHeaders(): Promise<{
  url: string;
  mode: HeadersMode;
  add(b: Block): void;
  requests: number;
  close(): Promise<void>;
}> {
  const blocks = new Map<string, Block>();
  const state = {
    url: '',
    mode: 'up' as HeadersMode,
    requests: 0,
    add: (b: Block) => void blocks.set(b.hash, b),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const server = http.createServer((req, res) => {
    state.requests++;
    if (state.mode === 'hang') return;
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (state.mode === 'down') return send(503, 'unavailable');
    const tip = [...blocks.values()].sort((a, b) => b.height - a.height)[0];
    if (req.url === '/chain/info') return send(200, { blocks: tip?.height ?? 0, bestblockhash: tip?.hash });
    const b = blocks.get(/^\/block\/([0-9a-f]{64})\/header$/.exec(req.url ?? '')?.[1] ?? '');
    if (!b) return send(404, 'unknown block');
    const h = parseHeader(b.headerHex);
    return send(200, {
      hash: b.hash,
      confirmations: (tip?.height ?? b.height) - b.height + 1,
      height: b.height,
      version: h.version,
      merkleroot: h.merkleRoot,
      time: h.time,
      nonce: h.nonce,
      bits: h.bits.toString(16).padStart(8, '0'),
      previousblockhash: h.prevHash,
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

const post = (api: RunningApi, body: string, authorization = `Bearer ${TOKEN}`) =>
  fetch(`${api.baseUrl}/arc/callback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=UTF-8', authorization },
    body,
  });

jest.setTimeout(60_000);

describe('POST /arc/callback: queued at once, proven by the arc-callbacks worker', () => {
  const prefix = uniquePrefix('arccb');
  const logger = createLogger({ level: 'silent', name: 'test' });
  const workerRedis = testRedisClient({ maxRetriesPerRequest: null });
  const workerBull = testBullRedis();
  const connection = testBullRedis();
  const queue = new Queue(QUEUES.arcCallbacks, { connection, prefix: bullPrefix(prefix, QUEUES.arcCallbacks) });
  let headers: Awaited<ReturnType<typeof startHeaders>>;
  let api: RunningApi;
  let chain: ArcChain;
  const workers: RunningArcCallbackWorker[] = [];

  // Short locks for every worker: a queue's stalled-job check runs at most once per the
  // stalledInterval of the worker that ran it last, so one default worker would delay the next check 30 s.
  const startWorker = async () => {
    const w = await startArcCallbackWorker({
      connection: workerBull,
      redisPrefix: prefix,
      deps: { headers: chain.headers, store: chain.store, logger, events: { redis: workerRedis, prefix } },
      lockDuration: 1000,
      stalledInterval: 200,
    });
    workers.push(w);
    return w;
  };
  const stopWorkers = async () => {
    for (const w of workers.splice(0)) await w.close();
  };
  const jobs = () => queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
  const queued = async () => Object.values(await jobs()).reduce((a, b) => a + b, 0);

  beforeAll(async () => {
    headers = await startHeaders();
    api = await startApi({
      prefix,
      fund: 0,
      env: {
        ARC_CALLBACK_URL: 'http://127.0.0.1:9/arc/callback',
        ARC_CALLBACK_TOKEN: TOKEN,
        HEADERS_URL: headers.url,
        ARC_TIMEOUT_MS: '1000',
      },
    });
    chain = api.recordsScope.chain;
  });
  afterEach(async () => {
    await stopWorkers();
    headers.mode = 'up';
  });
  afterAll(async () => {
    await api.close();
    await headers.close();
    await queue.close();
    await deleteByPrefix(workerRedis, prefix);
    await workerBull.quit();
    await connection.quit();
    await workerRedis.quit();
  });

  it('401 without the token and 400 for a body that is not a callback, both problem+json, nothing queued', async () => {
    const b = minedBlock('refused', 2);
    for (const authorization of ['', 'Bearer not-the-token', TOKEN]) {
      const res = await post(api, JSON.stringify(b.callbacks[0]), authorization);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toMatchObject({ status: 401, errorCode: 'ARC_CALLBACK_UNAUTHORIZED' });
    }
    for (const [body, errorCode] of [
      ['{"txid":"nope","txStatus":"MINED"}', 'ARC_CALLBACK_INVALID'],
      ['{"count":1,"callbacks":[{"txStatus":"MINED"}]}', 'ARC_CALLBACK_INVALID'],
      ['{"count":1,', 'BODY_INVALID_JSON'],
    ] as const) {
      const res = await post(api, body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toMatchObject({ status: 400, errorCode });
    }
    expect(await queued()).toBe(0);
  });

  it('a 500-callback batch with full BUMPs is answered 200 while the headers source hangs; its proofs appear once headers answer; a second delivery stores nothing twice', async () => {
    const b = minedBlock('batch', 500);
    headers.add(b);
    const body = JSON.stringify({ count: b.callbacks.length, callbacks: b.callbacks });
    // ARC's largest batch (500, internal/callbacker/processor.go) with BUMPs of a million-transaction block.
    const perCallback = Buffer.byteLength(body) / 500;
    expect(perCallback).toBeGreaterThan(1600);
    expect(Buffer.byteLength(body)).toBeLessThan(ARC_CALLBACK_BODY_LIMIT / 2);
    process.stdout.write(
      `500-callback batch: ${Buffer.byteLength(body)} bytes (${Math.round(perCallback)} per callback)\n`,
    );

    headers.mode = 'hang';
    await startWorker();
    const t0 = Date.now();
    const res = await post(api, body);
    const answeredMs = Date.now() - t0;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true, queued: 500 });
    // Within ARC's 5 s (internal/callbacker/sender.go), although no header can be fetched.
    expect(answeredMs).toBeLessThan(5000);
    await eventually(async () => headers.requests > 0, 5000);
    expect(await chain.store.txIdsOfBlock(b.hash)).toEqual([]);

    // The headers source comes back: the retried job proves every item, moves the tip up.
    headers.mode = 'up';
    await eventually(async () => (await chain.store.txIdsOfBlock(b.hash)).length === 500, 20_000, 100);
    expect(await chain.store.txIdsOfBlock(b.hash)).toEqual(b.txIds);
    expect(await chain.store.tip()).toMatchObject({ hash: b.hash, height: b.height });

    // ARC delivers the same batch again (its job done and removed): answered 200, proven again, stored once.
    await eventually(async () => (await queued()) === 0, 10_000, 50);
    const again = await post(api, body);
    expect(again.status).toBe(200);
    await eventually(async () => (await queued()) === 0, 10_000, 50);
    expect(await chain.store.txIdsOfBlock(b.hash)).toEqual(b.txIds);
  });

  it('the same batch delivered twice while queued is one job (its id is the batch hash)', async () => {
    const b = minedBlock('twice', 3, 20, 900_001);
    const body = JSON.stringify({ count: 3, callbacks: b.callbacks });
    expect((await post(api, body)).status).toBe(200);
    expect((await post(api, body)).status).toBe(200);
    const waiting = await queue.getJobs(['waiting']);
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.id).toMatch(/^[0-9a-f]{64}$/);
    headers.add(b);
    await startWorker();
    await eventually(async () => (await chain.store.txIdsOfBlock(b.hash)).length === 3, 10_000, 50);
    expect(await chain.store.txIdsOfBlock(b.hash)).toEqual(b.txIds);
  });

  it('413 problem+json above the body limit, nothing queued', async () => {
    const b = minedBlock('big', 2);
    const filler = 'x'.repeat(ARC_CALLBACK_BODY_LIMIT);
    const res = await post(api, JSON.stringify({ count: 1, callbacks: [{ ...b.callbacks[0], extraInfo: filler }] }));
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ status: 413, errorCode: 'CONTENT_LENGTH_LIMIT_EXCEEDED' });
    expect(await queued()).toBe(0);
  });

  it('a job held by a worker that dies is proven by another once its lock expires', async () => {
    const b = minedBlock('killed', 4, 20, 900_002);
    headers.add(b);
    expect((await post(api, JSON.stringify({ count: 4, callbacks: b.callbacks }))).status).toBe(200);
    // A worker takes the job and dies with it in hand: its lock is no longer renewed.
    const doomed = new Worker(QUEUES.arcCallbacks, null, {
      connection,
      prefix: bullPrefix(prefix, QUEUES.arcCallbacks),
      lockDuration: 600,
    });
    const token = randomUUID();
    let job = await doomed.getNextJob(token, { block: true });
    for (let i = 0; !job && i < 50; i += 1) job = await doomed.getNextJob(token, { block: true });
    expect(job).toBeDefined();
    await doomed.close(true);
    expect(await chain.store.txIdsOfBlock(b.hash)).toEqual([]);
    await startWorker();
    await eventually(async () => (await chain.store.txIdsOfBlock(b.hash)).length === 4, 15_000, 50);
    expect(await chain.store.txIdsOfBlock(b.hash)).toEqual(b.txIds);
  });
});

describe('POST /arc/callback with Redis down', () => {
  it('answers 503 REDIS_UNAVAILABLE (never 200 without the job stored), then 200 once Redis is back', async () => {
    const port = await freePort();
    const startRedis = () =>
      spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    let server = startRedis();
    const probe = createRedis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    probe.on('error', () => undefined);
    let api: RunningApi | null = null;
    try {
      await eventually(async () => (await probe.ping()) === 'PONG', 10_000, 50);
      const prefix = uniquePrefix('arccb-down');
      api = await startApi({
        prefix,
        fund: 0,
        env: {
          REDIS_URL: `redis://127.0.0.1:${port}`,
          ARC_CALLBACK_URL: 'http://127.0.0.1:9/arc/callback',
          ARC_CALLBACK_TOKEN: TOKEN,
        },
      });
      const body = JSON.stringify({ count: 1, callbacks: minedBlock('down', 1).callbacks });
      server.kill('SIGKILL');
      await new Promise((r) => server.once('exit', r));
      const t0 = Date.now();
      const res = await post(api, body);
      expect(res.status).toBe(503);
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toMatchObject({ status: 503, errorCode: 'REDIS_UNAVAILABLE' });

      server = startRedis();
      await eventually(async () => (await probe.ping()) === 'PONG', 10_000, 50);
      const running = api;
      await eventually(async () => (await post(running, body)).status === 200, 10_000, 100);
      const stored = new Queue(QUEUES.arcCallbacks, {
        connection: probe,
        prefix: bullPrefix(prefix, QUEUES.arcCallbacks),
      });
      expect(await stored.getJobCounts('waiting')).toEqual({ waiting: 1 });
      await stored.close();
    } finally {
      await api?.close();
      probe.disconnect();
      if (server.exitCode === null) server.kill('SIGKILL');
    }
  });
});
