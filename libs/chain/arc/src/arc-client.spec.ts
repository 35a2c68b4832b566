import net from 'node:net';
import { ArcClient } from './arc-client';
import { ArcAuthError, ArcTransientError } from './arc-errors';
import { ArcChainPublisher } from './arc-publisher';
import { ARC_STATUSES, isRejectionCode } from '@proofline/chain-domain';
import type { ArcStatus } from '@proofline/chain-domain';
import { startProtocolFixture } from './testing/protocol-fixture';
import type { FixtureReply, ProtocolFixture } from './testing/protocol-fixture';

const id = (n: number) => n.toString(16).padStart(64, '0');
const TX = { txId: id(1), hex: '0100000000' };
const BLOCK = 'ab'.repeat(32);

function ok(txid: string, txStatus: string, extra: Record<string, unknown> = {}): FixtureReply {
  return {
    status: 200,
    body: {
      timestamp: '2026-11-22T00:00:00Z',
      txid,
      txStatus,
      blockHash: '',
      blockHeight: 0,
      merklePath: '',
      extraInfo: '',
      competingTxs: null,
      status: 200,
      title: 'OK',
      ...extra,
    },
  };
}
function problem(status: number, txid: string, detail: string, extraInfo = ''): FixtureReply {
  return {
    status,
    headers: { 'Content-Type': 'application/problem+json' },
    body: {
      type: `https://arc.bitcoinsv.com/errors/${status}`,
      title: 'error',
      status,
      detail,
      instance: null,
      txid,
      extraInfo,
    },
  };
}

async function outcome<T>(p: Promise<T>): Promise<T | Error> {
  try {
    return await p;
  } catch (e) {
    return e as Error;
  }
}

describe('ArcClient against an ARC protocol fixture', () => {
  let fx: ProtocolFixture;
  let client: ArcClient;
  beforeAll(async () => {
    fx = await startProtocolFixture();
    client = new ArcClient({
      url: `${fx.url}/`,
      apiKey: 'key-123',
      callbackUrl: 'https://proofline.example/arc/callback',
      callbackToken: 'cb-token-0123456789',
      callbackBatch: true,
      timeoutMs: 1500,
      waitFor: 'SEEN_ON_NETWORK',
      maxTimeoutSeconds: 1,
    });
  });
  afterAll(() => fx.close());
  beforeEach(() => fx.requests.splice(0));

  it('POSTs {rawTx} to /v1/tx with the auth, callback and wait headers', async () => {
    fx.handle(() => ok(TX.txId, 'SEEN_ON_NETWORK'));
    await expect(client.submit(TX)).resolves.toEqual({
      kind: 'accepted',
      txId: TX.txId,
      status: 'SEEN_ON_NETWORK',
      mined: null,
    });
    const [req] = fx.requests;
    expect(req).toMatchObject({ method: 'POST', path: '/v1/tx' });
    expect(JSON.parse(req!.body)).toEqual({ rawTx: TX.hex });
    expect(req!.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Bearer key-123',
      'x-callbackurl': 'https://proofline.example/arc/callback',
      'x-callbacktoken': 'cb-token-0123456789',
      'x-callbackbatch': 'true',
      'x-waitfor': 'SEEN_ON_NETWORK',
      'x-maxtimeout': '1',
    });
  });

  const expected: Record<ArcStatus, string> = {
    UNKNOWN: 'pending',
    QUEUED: 'pending',
    RECEIVED: 'pending',
    STORED: 'pending',
    ANNOUNCED_TO_NETWORK: 'pending',
    REQUESTED_BY_NETWORK: 'pending',
    SENT_TO_NETWORK: 'pending',
    ACCEPTED_BY_NETWORK: 'pending',
    SEEN_IN_ORPHAN_MEMPOOL: 'pending',
    SEEN_ON_NETWORK: 'accepted',
    DOUBLE_SPEND_ATTEMPTED: 'refused',
    REJECTED: 'refused',
    MINED_IN_STALE_BLOCK: 'pending',
    MINED: 'accepted',
  };
  it.each(Object.keys(ARC_STATUSES) as ArcStatus[])('maps status %s', async (status) => {
    fx.handle(() =>
      ok(TX.txId, status, status === 'MINED' ? { blockHash: BLOCK, blockHeight: 7, merklePath: 'fe07' } : {}),
    );
    const r = await client.status(TX.txId);
    expect(r.kind).toBe(expected[status]);
    expect(fx.requests[0]).toMatchObject({ method: 'GET', path: `/v1/tx/${TX.txId}` });
  });

  it('reads MINED with block data, and MINED without a merklePath as not proven yet', async () => {
    fx.handle(() => ok(TX.txId, 'MINED', { blockHash: BLOCK.toUpperCase(), blockHeight: 12, merklePath: 'abcd' }));
    await expect(client.status(TX.txId)).resolves.toEqual({
      kind: 'accepted',
      txId: TX.txId,
      status: 'MINED',
      mined: { blockHash: BLOCK, blockHeight: 12, merklePath: 'abcd' },
    });
    fx.handle(() => ok(TX.txId, 'MINED', { blockHash: BLOCK, blockHeight: 12, merklePath: '' }));
    await expect(client.status(TX.txId)).resolves.toMatchObject({ kind: 'accepted', status: 'MINED', mined: null });
  });

  it('reads double spends with the competing txs, and late rejections', async () => {
    fx.handle(() =>
      ok(TX.txId, 'DOUBLE_SPEND_ATTEMPTED', { competingTxs: [id(9).toUpperCase()], extraInfo: 'spent twice' }),
    );
    await expect(client.submit(TX)).resolves.toEqual({
      kind: 'refused',
      txId: TX.txId,
      code: 'DOUBLE_SPEND_ATTEMPTED',
      reason: `ARC DOUBLE_SPEND_ATTEMPTED: spent twice (competing: ${id(9)})`,
      final: false,
      competingTxs: [id(9)],
    });
    fx.handle(() => ok(TX.txId, 'REJECTED', { extraInfo: 'arc error 461: script failed' }));
    await expect(client.submit(TX)).resolves.toEqual({
      kind: 'refused',
      txId: TX.txId,
      code: 'REJECTED',
      reason: 'ARC REJECTED: arc error 461: script failed',
      final: true,
      competingTxs: [],
    });
  });

  it.each([400, 460, 461, 462, 463, 464, 465, 466, 467, 468, 469, 471, 472, 473, 474, 475])(
    'reads HTTP %d as a rejection with its code and meaning',
    async (code) => {
      fx.handle(() => problem(code, TX.txId, 'refused', 'details here'));
      const r = await client.submit(TX);
      expect(r).toMatchObject({ kind: 'refused', txId: TX.txId, code, final: code !== 460 });
      expect(r.kind === 'refused' && r.reason).toMatch(/refused: details here$/);
      expect(isRejectionCode(code)).toBe(true);
    },
  );

  it.each([
    [500, 'server-error'],
    [502, 'server-error'],
    [503, 'server-error'],
    [429, 'rate-limited'],
    [409, 'conflict'],
    [404, 'unexpected-status'],
    [418, 'unexpected-status'],
  ])('throws a retryable ArcTransientError on HTTP %d (%s)', async (status, reason) => {
    fx.handle(() => ({ status, headers: { 'Retry-After': '7' }, body: 'busy' }));
    const e = await outcome(client.submit(TX));
    expect(e).toBeInstanceOf(ArcTransientError);
    expect(e).toMatchObject({ reason, upstreamStatus: status, retryable: true, retryAfterSeconds: 7 });
  });

  it.each([401, 403])('throws ArcAuthError on HTTP %d, not retryable', async (status) => {
    fx.handle(() => problem(status, TX.txId, 'bad key'));
    const e = await outcome(client.status(TX.txId));
    expect(e).toBeInstanceOf(ArcAuthError);
    expect(e).toMatchObject({ upstreamStatus: status, retryable: false });
  });

  it.each([
    ['not JSON', { status: 200, body: '<html>gateway</html>' }],
    ['a JSON body of another shape', { status: 200, body: { hello: 'world' } }],
    ['an answer for another txid', ok(id(2), 'SEEN_ON_NETWORK')],
  ] as [string, FixtureReply][])('refuses %s as a transient malformed-response', async (_label, reply) => {
    fx.handle(() => reply);
    await expect(outcome(client.submit(TX))).resolves.toMatchObject({ reason: 'malformed-response', retryable: true });
  });

  it('names an unknown status in a transient error', async () => {
    fx.handle(() => ok(TX.txId, 'TELEPORTED'));
    const e = await outcome(client.status(TX.txId));
    expect(e).toBeInstanceOf(ArcTransientError);
    expect((e as ArcTransientError).reason).toBe('unknown-status');
    expect((e as Error).message).toContain('TELEPORTED');
  });

  it('times out a request that gets no answer', async () => {
    const fast = new ArcClient({ url: fx.url, timeoutMs: 150 });
    fx.handle(() => 'hang');
    const started = Date.now();
    await expect(outcome(fast.status(TX.txId))).resolves.toMatchObject({ reason: 'timeout', retryable: true });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('reports a refused connection as a network fault', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const down = new ArcClient({ url: `http://127.0.0.1:${closed}`, timeoutMs: 1000 });
    await expect(outcome(down.submit(TX))).resolves.toMatchObject({ reason: 'network', retryable: true });
  });

  it('status: 404 with ARC problem JSON is not-found; a bare 404 is transient', async () => {
    fx.handle(() => problem(404, TX.txId, 'Transaction could not be found'));
    await expect(client.status(TX.txId)).resolves.toEqual({ kind: 'not-found', txId: TX.txId });
    fx.handle(() => ({ status: 404, body: 'Not Found' }));
    await expect(outcome(client.status(TX.txId))).resolves.toMatchObject({
      reason: 'not-found-without-problem',
      retryable: true,
    });
    fx.handle(() => ({ status: 404, body: { message: 'no route' } }));
    await expect(outcome(client.status(TX.txId))).resolves.toMatchObject({ reason: 'not-found-without-problem' });
  });

  it('submitMany matches a bare array answered out of order by txid; a missing entry is transient in its slot', async () => {
    const txs = [1, 2, 3, 4].map((n) => ({ txId: id(n), hex: `0${n}` }));
    fx.handle(() => ({
      status: 200,
      body: [ok(id(3), 'SEEN_ON_NETWORK'), ok(id(1), 'STORED'), problem(465, id(2), 'fee too low')].map(
        (r) => (r as { body: unknown }).body,
      ),
    }));
    const results = await client.submitMany(txs);
    expect(fx.requests[0]).toMatchObject({ method: 'POST', path: '/v1/txs' });
    expect(JSON.parse(fx.requests[0]!.body)).toEqual(txs.map((t) => ({ rawTx: t.hex })));
    expect(results[0]).toMatchObject({ kind: 'pending', txId: id(1), status: 'STORED' });
    expect(results[1]).toMatchObject({ kind: 'refused', txId: id(2), code: 465 });
    expect(results[2]).toMatchObject({ kind: 'accepted', txId: id(3) });
    expect(results[3]).toBeInstanceOf(ArcTransientError);
    expect(results[3]).toMatchObject({ reason: 'missing-in-batch' });
  });

  it('submitMany throws on a transient whole-batch fault', async () => {
    fx.handle(() => ({ status: 503, body: 'down' }));
    await expect(outcome(client.submitMany([TX]))).resolves.toMatchObject({ reason: 'server-error' });
  });

  it('policy: miningFee as satoshis per kB, and the size limits', async () => {
    fx.handle(() => ({
      status: 200,
      body: {
        timestamp: 'x',
        policy: {
          maxscriptsizepolicy: 1,
          maxtxsigopscountspolicy: 1,
          maxtxsizepolicy: 10_000_000,
          miningFee: { satoshis: 1, bytes: 1000 },
          standardFormatSupported: true,
        },
      },
    }));
    await expect(client.policy()).resolves.toEqual({
      satoshisPerKb: 1,
      maxTxSizePolicy: 10_000_000,
      maxScriptSizePolicy: 1,
      standardFormatSupported: true,
    });
    fx.handle(() => ({ status: 200, body: { policy: { miningFee: { satoshis: 50, bytes: 2000 } } } }));
    await expect(client.policy()).resolves.toMatchObject({ satoshisPerKb: 25 });
    expect(fx.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/policy' });
    fx.handle(() => ({ status: 200, body: { policy: { miningFee: { satoshis: 1, bytes: 0 } } } }));
    await expect(outcome(client.policy())).resolves.toMatchObject({ reason: 'malformed-response' });
  });

  it('refuses a bad txId and bad options before any request', async () => {
    await expect(outcome(client.status('nope'))).resolves.toBeInstanceOf(Error);
    expect(fx.requests).toHaveLength(0);
    expect(() => new ArcClient({ url: fx.url, timeoutMs: 1000, maxTimeoutSeconds: 5 })).toThrow(/exceed/);
    expect(() => new ArcClient({ url: fx.url, timeoutMs: 60000, maxTimeoutSeconds: 31 })).toThrow(/1 to 30/);
    expect(() => new ArcClient({ url: fx.url, timeoutMs: 1000, callbackUrl: 'https://x' })).toThrow(/together/);
  });
});

describe('ArcChainPublisher: ARC answers as broadcast verdicts', () => {
  let fx: ProtocolFixture;
  let publisher: ArcChainPublisher;
  beforeAll(async () => {
    fx = await startProtocolFixture();
    publisher = new ArcChainPublisher(new ArcClient({ url: fx.url, timeoutMs: 1000 }));
  });
  afterAll(() => fx.close());
  const tx = { txId: TX.txId, rawTx: Buffer.from(TX.hex, 'hex') };

  it.each([
    [ok(TX.txId, 'SEEN_ON_NETWORK'), { kind: 'accepted', status: 'SEEN_ON_NETWORK' }],
    [ok(TX.txId, 'STORED'), { kind: 'pending', status: 'STORED' }],
    [ok(TX.txId, 'RECEIVED'), { kind: 'pending', status: 'RECEIVED' }],
    [ok(TX.txId, 'ANNOUNCED_TO_NETWORK'), { kind: 'pending', status: 'ANNOUNCED_TO_NETWORK' }],
    [ok(TX.txId, 'MINED_IN_STALE_BLOCK'), { kind: 'pending', status: 'MINED_IN_STALE_BLOCK' }],
    [
      ok(TX.txId, 'MINED', { blockHash: BLOCK, blockHeight: 3, merklePath: 'ab' }),
      { kind: 'accepted', status: 'MINED', mined: { blockHash: BLOCK, blockHeight: 3, merklePath: 'ab' } },
    ],
    [ok(TX.txId, 'SEEN_IN_ORPHAN_MEMPOOL'), { kind: 'pending', status: 'SEEN_IN_ORPHAN_MEMPOOL' }],
    [
      ok(TX.txId, 'DOUBLE_SPEND_ATTEMPTED', { competingTxs: [id(5)] }),
      { kind: 'refused', code: 'DOUBLE_SPEND_ATTEMPTED', final: false, competingTxs: [id(5)] },
    ],
    [problem(466, TX.txId, 'conflict'), { kind: 'refused', code: 466, final: true }],
    [problem(461, TX.txId, 'script'), { kind: 'refused', code: 461, final: true }],
    [problem(465, TX.txId, 'fee'), { kind: 'refused', code: 465, final: true }],
    [problem(475, TX.txId, 'ancestors'), { kind: 'refused', code: 475, final: true }],
    [problem(460, TX.txId, 'parents'), { kind: 'refused', code: 460, final: false }],
    [ok(TX.txId, 'REJECTED'), { kind: 'refused', code: 'REJECTED', final: true }],
    [problem(400, '', 'invalid X-CallbackUrl'), { kind: 'request-problem', httpStatus: 400 }],
    [problem(463, id(6), 'not this one'), { kind: 'request-problem', httpStatus: 463 }],
  ] as [FixtureReply, object][])('reads %j', async (reply, verdict) => {
    fx.handle(() => reply);
    await expect(publisher.submit(tx)).resolves.toMatchObject({ txId: TX.txId, ...verdict });
  });

  it('throws on transient faults so BullMQ retries the same bytes', async () => {
    fx.handle(() => ({ status: 429, body: '' }));
    await expect(outcome(publisher.submit(tx))).resolves.toBeInstanceOf(ArcTransientError);
  });

  it('submitMany falls back to one submission per tx when ARC refuses the whole batch', async () => {
    fx.requests.splice(0);
    const good = { txId: id(7), rawTx: Uint8Array.of(7) };
    const bad = { txId: id(8), rawTx: Uint8Array.of(8) };
    fx.handle((req) => {
      if (req.path === '/v1/txs') return problem(463, '', 'cannot parse transaction 2');
      const { rawTx } = JSON.parse(req.body) as { rawTx: string };
      return rawTx === '08' ? problem(463, bad.txId, 'malformed') : ok(good.txId, 'SEEN_ON_NETWORK');
    });
    const results = await publisher.submitMany([good, bad]);
    expect(results).toEqual([
      { txId: good.txId, verdict: { kind: 'accepted', txId: good.txId, status: 'SEEN_ON_NETWORK', mined: null } },
      { txId: bad.txId, verdict: expect.objectContaining({ kind: 'refused', code: 463 }) },
    ]);
    expect(fx.requests.map((r) => r.path)).toEqual(['/v1/txs', '/v1/tx', '/v1/tx']);
  });
});
