import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { walletKeys } from '@proofline/chain-wallet';
import { createBootstrapKey } from '@proofline/identity-feature';
import { eventually, keysMatching, uniquePrefix } from '@proofline/shared-testing';
import { send, startApi } from '../testing/harness';
import type { RunningApi } from '../testing/harness';
import { keyTag } from '@proofline/shared-redis';

/** A record write (octet-stream body) with the given key. */
function postRecord(api: RunningApi, key: string, body: string, path = '/api/v1/records'): Promise<Response> {
  return send(api, 'POST', path, { key, body, contentType: 'application/octet-stream' });
}

/** A testnet deployment whose ARC (and headers source) is `url`. */
function testnet(url: string): Record<string, string> {
  return { NETWORK: 'testnet', WALLET_SEED: '11'.repeat(32), ARC_URL: url, HEADERS_URL: url };
}

/** ARC's `GET /v1/policy` answer with the given limits (fee 1 sat / 1000 B). */
function policyBody(maxtxsizepolicy: number, maxscriptsizepolicy: number) {
  return {
    timestamp: new Date().toISOString(),
    policy: {
      maxscriptsizepolicy,
      maxtxsigopscountspolicy: 4_294_967_295,
      maxtxsizepolicy,
      miningFee: { satoshis: 1, bytes: 1000 },
      standardFormatSupported: true,
    },
  };
}

/**
 * An ARC that answers `/v1/policy` as the test scripts it: `hold` keeps requests open until
 * `answer` is called (ARC slow to answer), a status code answers that status; anything else 404.
 */
async function startPolicyServer() {
  let mode: 'hold' | number | object = 'hold';
  const held: http.ServerResponse[] = [];
  let calls = 0;
  const reply = (res: http.ServerResponse) => {
    if (typeof mode === 'number') {
      res.writeHead(mode, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: mode }));
    } else res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(mode));
  };
  const server = http.createServer((req, res) => {
    if (req.url !== '/v1/policy') return void res.writeHead(404).end();
    calls++;
    if (mode === 'hold') held.push(res);
    else reply(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    held: () => held.length,
    /** From now on answer `next`, and answer every held request with it. */
    answer(next: number | object) {
      mode = next;
      for (const res of held.splice(0)) reply(res);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Outside the devnet a write is priced and sized by ARC's policy: 503 FEE_POLICY_UNKNOWN while
 * none is known (ARC slow or failing, nothing shared in Redis), 413 RECORD_TOO_LARGE_FOR_POLICY
 * beyond its maxtxsizepolicy / maxscriptsizepolicy. Every refusal stores nothing and leaves the
 * funding pool as it was. Writes are not published here (no worker): the pool's UTXOs are fake.
 */
describe('records outside the devnet: ARC fee policy', () => {
  let arc: Awaited<ReturnType<typeof startPolicyServer>>;
  let api: RunningApi;
  let key: string;
  let prefix: string;

  beforeAll(async () => {
    arc = await startPolicyServer();
    prefix = uniquePrefix('pol');
    api = await startApi({
      prefix,
      fund: 10,
      env: {
        ...testnet(arc.url),
        ARC_TIMEOUT_MS: '10000',
        MAX_RECORD_BYTES: '1024',
      },
    });
    const { redis, config, clock } = api.deps;
    key = await createBootstrapKey({ redis, config, clock }, 'tenant-a');
  });
  afterAll(async () => {
    await api.close();
    await arc.close();
  });

  const write = (path: string, body: string) => postRecord(api, key, body, path);
  const recordKeys = () => keysMatching(api.deps.redis, `${keyTag(prefix, 'rec')}:records:*`);
  const poolCounts = async () => {
    const s = await api.recordsScope.wallet.pool.status();
    return { free: s.free.count, leased: s.leased.count, spent: s.spentUnconfirmed.count };
  };
  const readiness = async () =>
    ((await (await fetch(`${api.baseUrl}/readiness`)).json()) as { checks: { feePolicy?: string } }).checks;

  it('ARC answers its policy late: 503 FEE_POLICY_UNKNOWN (problem+json, Retry-After) until it does, then writes are accepted', async () => {
    await eventually(async () => arc.held() > 0);
    expect(await readiness()).toMatchObject({ redis: 'up', feePolicy: 'unknown' });
    const before = await poolCounts();
    for (const path of ['/api/v1/records', '/api/v1/linkedrecords']) {
      const res = await write(path, 'early');
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await res.json()).toMatchObject({ errorCode: 'FEE_POLICY_UNKNOWN', status: 503 });
    }
    expect(await recordKeys()).toEqual([]);
    expect(await poolCounts()).toEqual(before);
    // One fetch in flight, however many writes asked.
    expect(arc.calls()).toBe(1);

    arc.answer(policyBody(500, 2000));
    await eventually(async () => (await readiness()).feePolicy === 'known');
    const ok = await write('/api/v1/records', 'on time');
    expect(ok.status).toBe(200);
    expect(await poolCounts()).toEqual({ free: before.free - 1, leased: 0, spent: 1 });
  });

  it('413 RECORD_TOO_LARGE_FOR_POLICY beyond maxtxsizepolicy or maxscriptsizepolicy: nothing stored, no funding spent', async () => {
    // maxtxsizepolicy 500: 600 bytes of data cannot fit (refused before funding); 450 can only
    // once built (the inputs and other outputs push it over: refused after, its funding given back).
    const keysBefore = await recordKeys();
    const before = await poolCounts();
    for (const [size, why] of [
      [600, /would exceed 607 bytes/],
      [450, /its transaction would be \d+ bytes/],
    ] as const) {
      const res = await write('/api/v1/linkedrecords', 'x'.repeat(size));
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await res.json()) as { errorCode: string; detail: string };
      expect(problem).toMatchObject({ errorCode: 'RECORD_TOO_LARGE_FOR_POLICY', status: 413 });
      expect(problem.detail).toContain('maxtxsizepolicy');
      expect(problem.detail).toMatch(why);
    }
    // MAX_RECORD_BYTES (1024) answers first where it is the smaller limit.
    const huge = await write('/api/v1/records', 'x'.repeat(2000));
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ errorCode: 'CONTENT_LENGTH_LIMIT_EXCEEDED' });
    expect(await recordKeys()).toEqual(keysBefore);
    expect(await poolCounts()).toEqual(before);

    // The data output's script: maxscriptsizepolicy 300.
    arc.answer(policyBody(100_000, 300));
    await api.recordsScope.fees.refresh();
    const script = await write('/api/v1/records', 'y'.repeat(400));
    expect(script.status).toBe(413);
    const problem = (await script.json()) as { errorCode: string; detail: string };
    expect(problem.errorCode).toBe('RECORD_TOO_LARGE_FOR_POLICY');
    expect(problem.detail).toContain('maxscriptsizepolicy');
    expect(await recordKeys()).toEqual(keysBefore);
    expect(await poolCounts()).toEqual(before);
    // Within both limits: accepted.
    expect((await write('/api/v1/records', 'y'.repeat(250))).status).toBe(200);
  });

  it('ARC failing from the start: 503 until another process shares its policy through Redis', async () => {
    arc.answer(503);
    const prefix2 = uniquePrefix('pol');
    const api2 = await startApi({
      prefix: prefix2,
      fund: 3,
      env: testnet(arc.url),
    });
    try {
      const { redis, config, clock } = api2.deps;
      const key2 = await createBootstrapKey({ redis, config, clock }, 'tenant-a');
      await api2.recordsScope.fees.refresh();
      const refused = await postRecord(api2, key2, 'while ARC fails');
      expect(refused.status).toBe(503);
      // The next fetch is the retry 30 s after the failure.
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(25);
      expect(await refused.json()).toMatchObject({ errorCode: 'FEE_POLICY_UNKNOWN' });
      expect(await keysMatching(redis, `${keyTag(prefix2, 'rec')}:records:*`)).toEqual([]);

      // Another process of the deployment fetched it: a fetch that fails reads the shared copy.
      await redis.set(
        walletKeys(prefix2).feePolicy,
        JSON.stringify({
          satoshis: 1,
          bytes: 1000,
          maxTxBytes: 100_000,
          maxScriptBytes: 90_000,
          fetchedAt: Date.now(),
        }),
      );
      await api2.recordsScope.fees.refresh();
      const accepted = await postRecord(api2, key2, 'shared policy');
      expect(accepted.status).toBe(200);

      // A shared copy older than FEE_POLICY_MAX_AGE_MS (1 hour) is not a known policy.
      const stale = { satoshis: 1, bytes: 1000, fetchedAt: Date.now() - 3_700_000 };
      await redis.set(walletKeys(prefix2).feePolicy, JSON.stringify(stale));
      const api3 = await startApi({
        prefix: prefix2,
        fund: 0,
        env: testnet(arc.url),
      });
      try {
        await api3.recordsScope.fees.start();
        const res = await postRecord(api3, key2, 'stale');
        expect(res.status).toBe(503);
        expect(await res.json()).toMatchObject({ errorCode: 'FEE_POLICY_UNKNOWN' });
      } finally {
        await api3.close();
      }
    } finally {
      await api2.close();
    }
  });
});
