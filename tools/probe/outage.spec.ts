/**
 * Operations against real processes (the compiled apps, as users run them) and a Redis this spec
 * starts on free ports, of the topology the suite runs on (PROOFLINE_TEST_REDIS: one redis-server,
 * or every node of a one- or three-master cluster, killed, frozen and restarted together):
 *  - redis-server SIGKILLed, then frozen (SIGSTOP), under REST + GraphQL load: every answer is a
 *    success or 503 REDIS_UNAVAILABLE with Retry-After (GraphQL: extensions.code), none 500, each
 *    within 2 s; readiness 503 and liveness 200 meanwhile; every acknowledged write is there after;
 *  - SIGKILL of the first of two API processes sharing the port (API_PROCESSES=2, reusePort)
 *    under load: 0 refused connections, only requests in flight in it may fail (the launcher's
 *    restart of each is apps/launcher's spec);
 *  - an API process started while Redis is down listens (liveness 200, readiness 503, requests
 *    503) and becomes ready by itself when Redis comes back; its first request then succeeds.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { FundingPool } from '@proofline/chain-wallet';
import { generateRawKey } from '@proofline/identity-domain';
import { fundPool } from '@proofline/records-testing';
import { openRedis, resolvePartitions } from '@proofline/shared-redis';
import { freePort, listeners } from '@proofline/shared-testing';
import {
  ROOT,
  buildInto,
  redisDeployment,
  request,
  startApp,
  startLoad,
  testTopology,
  until,
  violations,
} from './stack';
import type { Answer, App, RedisDeploymentUnderTest, RequestSpec } from './stack';

jest.setTimeout(120_000);

const BOUND_MS = 2000;
const DIST = path.join(ROOT, '.jest-cache', 'ops-outage', 'dist');

/**
 * Funds the wallet's pool under `prefix` (no worker runs here to split coinbases), as the fuzz
 * stack does: without it valid writes answer 503 FUNDING_EXHAUSTED, which is right but not what
 * this spec probes.
 */
async function fund(url: string, prefix: string, count: number): Promise<void> {
  const redis = await openRedis({ url }, { maxRetriesPerRequest: 2 });
  try {
    // Into the shards of the partitions the service runs with (REDIS_PARTITIONS unset: resolved as it does).
    const { count: partitions } = await resolvePartitions(redis, prefix, undefined);
    await fundPool(new FundingPool(redis, { prefix, address: 'outage', partitions }), count, 1000);
  } finally {
    await redis.quit();
  }
}

describe('Redis outages, frozen Redis and API process crashes (real processes)', () => {
  const key = generateRawKey();
  const prefix = `outage${randomBytes(4).toString('hex')}`;
  let redis: RedisDeploymentUnderTest;
  let api: App;
  let port: number;
  let apiEnv: Record<string, string>;
  let graphql: App;
  let base: string;
  let gqlBase: string;
  let token: string;
  let knownTx: string;
  const extra: App[] = [];
  const extraRedis: RedisDeploymentUnderTest[] = [];

  beforeAll(async () => {
    buildInto(DIST);
    // AOF fsync always: the SIGKILL case asserts every acknowledged write is kept, which is
    // Proofline's promise over a Redis that acknowledges durably; under everysec a slow fsync on a
    // loaded CI disk let Redis answer writes it had not written yet (docs/operations.md).
    redis = await redisDeployment(fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-outage-')), testTopology(), {
      fsync: 'always',
    });
    await redis.start();
    await fund(redis.url, prefix, 5000);
    let gqlPort: number;
    [port, gqlPort] = [await freePort(), await freePort()];
    const env = {
      ...redis.env,
      REDIS_PREFIX: prefix,
      HOST: '127.0.0.1',
      BOOTSTRAP_API_KEY: key,
      SHUTDOWN_GRACE_MS: '2000',
      LEGACY_SUNSET: '2099-01-01T00:00:00Z',
    };
    // Two independent API processes on one port, as `npm start` runs API_PROCESSES=2.
    apiEnv = { ...env, PORT: String(port), API_PROCESSES: '2' };
    api = startApp(DIST, 'api', apiEnv);
    extra.push(startApp(DIST, 'api', apiEnv));
    graphql = startApp(DIST, 'graphql', { ...env, GRAPHQL_PORT: String(gqlPort) });
    base = `http://127.0.0.1:${port}`;
    gqlBase = `http://127.0.0.1:${gqlPort}`;
    await until(async () => (await request(base, 'GET', '/readiness')).status === 200, 90_000, 100);
    await until(async () => (await request(gqlBase, 'GET', '/readiness')).status === 200, 90_000, 100);
    // A verifier token signed with another secret: verifying it reads the dev secret from Redis.
    token = await new SignJWT({ 'cognito:groups': ['a'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(randomBytes(32));
    const first = await write();
    knownTx = (JSON.parse(first.body) as { txId: string }).txId;
  });

  afterAll(async () => {
    await Promise.all([api, graphql, ...extra].map((a) => a?.stop(5000)));
    await Promise.all([redis, ...extraRedis].map((r) => r?.stop()));
    fs.rmSync(redis.dir, { recursive: true, force: true });
  });

  const writeSpec: RequestSpec = () => ({
    method: 'POST',
    path: '/api/v1/records?encode=SHA256',
    headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' },
    body: randomBytes(16).toString('hex'),
  });
  const write = () => {
    const r = writeSpec();
    return request(base, r.method, r.path, r.headers, r.body);
  };
  const restSpecs = (): RequestSpec[] => [
    writeSpec,
    () => ({ method: 'GET', path: `/api/v1/records/${knownTx}/status`, headers: { 'x-api-key': key } }),
    () => ({ method: 'GET', path: '/api/v1/auth/identity-api-keys', headers: { 'x-api-key': key } }),
    () => ({ method: 'GET', path: '/api/v1/auth/identity-api-keys/usage', headers: { 'x-api-key': key } }),
    () => ({
      method: 'GET',
      path: '/api/v1/psp/product-manager/customer-user-api-keys',
      headers: { 'x-api-key': key },
    }),
    () => ({ method: 'GET', path: '/auth/granted-claims', headers: { authorization: `Bearer ${token}` } }),
  ];
  const gqlSpecs: RequestSpec[] = [
    () => ({
      method: 'POST',
      path: '/graphql',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ apiKeyUsage { used limit } }' }),
    }),
  ];

  const summary = (answers: readonly Answer[]) => {
    const byStatus: Record<string, number> = {};
    for (const a of answers) {
      const label = a.status === 0 ? (a.error ?? 'error') : `${a.status}${a.errorCode ? ` ${a.errorCode}` : ''}`;
      byStatus[label] = (byStatus[label] ?? 0) + 1;
    }
    return byStatus;
  };

  it('redis-server SIGKILLed under load: 503 REDIS_UNAVAILABLE with Retry-After or success, none 500, each within 2 s; readiness 503, liveness 200; acknowledged writes kept', async () => {
    const rest = startLoad(base, restSpecs(), 6);
    const gql = startLoad(gqlBase, gqlSpecs, 2);
    await until(() => rest.answers().filter((a) => a.status === 200).length > 20, 20_000);
    await redis.kill();
    const downAt = Date.now();
    await until(() => rest.answers().some((a) => a.startedAt > downAt && a.status === 503), 5000);
    const [ready, live, gqlReady] = await Promise.all([
      request(base, 'GET', '/readiness'),
      request(base, 'GET', '/liveness'),
      request(gqlBase, 'GET', '/readiness'),
    ]);
    await until(() => gql.answers().some((a) => a.startedAt > downAt && a.errorCode === 'REDIS_UNAVAILABLE'), 5000);
    await new Promise((r) => setTimeout(r, 1500));
    await redis.start();
    await until(async () => (await request(base, 'GET', '/readiness')).status === 200, 10_000);
    const backAt = Date.now();
    await until(() => rest.answers().filter((a) => a.startedAt > backAt && a.status === 200).length > 10, 10_000);
    const answers = [...(await rest.stop()), ...(await gql.stop())];

    expect({ status: ready.status, ms: ready.ms < 1000 }).toEqual({ status: 503, ms: true });
    expect(JSON.parse(ready.body)).toMatchObject({ status: 'not-ready', checks: { redis: 'down' } });
    expect(live.status).toBe(200);
    expect(gqlReady.status).toBe(503);
    expect(violations(answers, BOUND_MS)).toEqual([]);
    const unavailable = answers.filter((a) => a.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    expect(unavailable.every((a) => a.errorCode === 'REDIS_UNAVAILABLE' && a.retryAfter === '1')).toBe(true);
    // Every Redis-backed route of the mix answered 503 REDIS_UNAVAILABLE at least once (none hung or
    // 500ed). The claims route needs Redis only until its process holds the dev secret (then 401).
    const paths = new Set(unavailable.map((a) => a.path.split('?')[0]?.replace(/[0-9a-f]{64}/, ':txId')));
    expect([...paths]).toEqual(
      expect.arrayContaining([
        '/api/v1/records',
        '/api/v1/records/:txId/status',
        '/api/v1/auth/identity-api-keys',
        '/api/v1/auth/identity-api-keys/usage',
        '/api/v1/psp/product-manager/customer-user-api-keys',
        '/graphql',
      ]),
    );
    const gqlUnavailable = answers.find((a) => a.path === '/graphql' && a.errorCode === 'REDIS_UNAVAILABLE');
    expect(JSON.parse(gqlUnavailable?.body ?? '{}')).toMatchObject({
      errors: [{ extensions: { code: 'REDIS_UNAVAILABLE' } }],
    });
    expect(gqlUnavailable?.body).not.toContain('originalError');

    // Nothing acknowledged is lost (AOF fsync always, SIGKILL): each acknowledged write reads back.
    const acknowledged = answers
      .filter((a) => a.path.startsWith('/api/v1/records?') && a.status === 200)
      .map((a) => (JSON.parse(a.body) as { txId: string }).txId);
    expect(acknowledged.length).toBeGreaterThan(0);
    const reads = await Promise.all(
      acknowledged.slice(-200).map((tx) => request(base, 'GET', `/api/v1/records/${tx}/status`, { 'x-api-key': key })),
    );
    expect(reads.filter((r) => r.status !== 200).map((r) => `${r.path} ${r.status}`)).toEqual([]);
    process.stdout.write(
      `redis killed: ${JSON.stringify(summary(answers))}; slowest ${Math.round(Math.max(...answers.map((a) => a.ms)))} ms\n`,
    );
  });

  it('redis-server frozen (SIGSTOP 4 s) under load: every request answered within 2 s, 503 REDIS_UNAVAILABLE or success, none 500', async () => {
    const rest = startLoad(base, restSpecs(), 6);
    const gql = startLoad(gqlBase, gqlSpecs, 2);
    await until(() => rest.answers().filter((a) => a.status === 200).length > 10, 20_000);
    redis.freeze();
    const frozenAt = Date.now();
    try {
      const [ready, live] = await Promise.all([request(base, 'GET', '/readiness'), request(base, 'GET', '/liveness')]);
      expect({ ready: ready.status, readyWithinBound: ready.ms < 1500, live: live.status }).toEqual({
        ready: 503,
        readyWithinBound: true,
        live: 200,
      });
      await until(() => gql.answers().some((a) => a.startedAt > frozenAt && a.errorCode === 'REDIS_UNAVAILABLE'), 5000);
      await new Promise((r) => setTimeout(r, Math.max(0, 4000 - (Date.now() - frozenAt))));
    } finally {
      redis.thaw();
    }
    const thawedAt = Date.now();
    await until(() => rest.answers().filter((a) => a.startedAt > thawedAt && a.status === 200).length > 10, 10_000);
    const answers = [...(await rest.stop()), ...(await gql.stop())];
    expect(violations(answers, BOUND_MS)).toEqual([]);
    const duringFreeze = answers.filter((a) => a.startedAt > frozenAt + 100 && a.startedAt < frozenAt + 3000);
    expect(duringFreeze.length).toBeGreaterThan(0);
    expect(
      duringFreeze
        .filter((a) => a.status === 503)
        .every((a) => a.errorCode === 'REDIS_UNAVAILABLE' && a.retryAfter === '1'),
    ).toBe(true);
    expect(duringFreeze.some((a) => a.status === 503)).toBe(true);
    const slowest = Math.round(Math.max(...duringFreeze.map((a) => a.ms)));
    process.stdout.write(
      `redis frozen: ${JSON.stringify(summary(answers))}; slowest answer sent during the freeze ${slowest} ms\n`,
    );
  });

  it('SIGKILL of the first of two API processes sharing the port under load: no refused connection, only requests in flight in it fail', async () => {
    await until(() => listeners(port) === 2, 20_000);
    const concurrency = 8;
    const load = startLoad(base, restSpecs().slice(0, 4), concurrency);
    await until(() => load.answers().filter((a) => a.status === 200).length > 20, 20_000);
    const victim = api.child.pid ?? 0;
    process.kill(victim, 'SIGKILL');
    const killedAt = Date.now();
    // The kernel frees a killed process's memory before its files: its listening socket takes
    // connections into its own queue until then and resets them when it closes; those were in
    // flight in that process. It is gone once its parent (this spec) sees it exit.
    await api.exited;
    const goneAt = Date.now();
    // The launcher would restart it now; here a new process takes its place.
    api = startApp(DIST, 'api', apiEnv);
    await until(() => listeners(port) === 2, 20_000);
    const replacedAfterMs = Date.now() - killedAt;
    await until(() => load.answers().filter((a) => a.startedAt > goneAt && a.status === 200).length > 50, 30_000);
    const answers = await load.stop();
    const refused = answers.filter((a) => a.error === 'ECONNREFUSED');
    const failed = answers.filter((a) => a.status === 0);
    expect(refused).toEqual([]);
    // A request can only fail if it was in flight in the killed process (asserted by its times
    // below): a loop loses the request it had there and, at most, the next one, sent in the moment
    // between the kill and the kernel closing the process's listening socket.
    expect(failed.length).toBeLessThanOrEqual(2 * concurrency);
    expect(failed.filter((a) => a.startedAt > goneAt || a.startedAt + a.ms < killedAt)).toEqual([]);
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    process.stdout.write(
      `api process killed: ${answers.length} answers, ${failed.length} in flight failed, 0 refused, gone after ${goneAt - killedAt} ms, a new one listening after ${replacedAfterMs} ms\n`,
    );
  });

  it('API and GraphQL processes started while Redis is down listen, report not-ready, and become ready when Redis comes back', async () => {
    const down = await redisDeployment(fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-late-')), testTopology());
    extraRedis.push(down);
    const port = await freePort();
    // The API is given REDIS_URL only (it asks whether it is a cluster once Redis answers); GraphQL
    // gets the cluster's nodes by name too (no question: a cluster client from the start).
    const late = startApp(DIST, 'api', {
      REDIS_URL: down.url,
      REDIS_PREFIX: prefix,
      HOST: '127.0.0.1',
      PORT: String(port),
      API_PROCESSES: '1',
      BOOTSTRAP_API_KEY: key,
    });
    extra.push(late);
    const gqlPort = await freePort();
    const lateGql = startApp(DIST, 'graphql', {
      ...down.env,
      REDIS_PREFIX: prefix,
      HOST: '127.0.0.1',
      GRAPHQL_PORT: String(gqlPort),
    });
    extra.push(lateGql);
    const lateBase = `http://127.0.0.1:${port}`;
    const lateGqlBase = `http://127.0.0.1:${gqlPort}`;
    // The same two requests while Redis is down (refused) and once it is back (answered).
    const askHealth = () =>
      request(
        lateGqlBase,
        'POST',
        '/graphql',
        { 'content-type': 'application/json' },
        JSON.stringify({ query: '{ health }' }),
      );
    const writeRecord = (body: string) =>
      request(
        lateBase,
        'POST',
        '/api/v1/records?encode=SHA256',
        { 'x-api-key': key, 'content-type': 'application/octet-stream' },
        body,
      );
    const refusalOf = (r: { status: number; errorCode?: string; retryAfter?: string }) => ({
      status: r.status,
      errorCode: r.errorCode,
      retryAfter: r.retryAfter,
    });
    const redisDown = { status: 503, errorCode: 'REDIS_UNAVAILABLE', retryAfter: '1' };
    // On a failure, what the two processes logged (a start that failed says why).
    try {
      await until(async () => (await request(lateBase, 'GET', '/liveness')).status === 200, 60_000, 100);
      await until(async () => (await request(lateGqlBase, 'GET', '/liveness')).status === 200, 60_000, 100);
      expect((await request(lateGqlBase, 'GET', '/readiness')).status).toBe(503);
      expect(refusalOf(await askHealth())).toEqual(redisDown);
      const ready = await request(lateBase, 'GET', '/readiness');
      expect(ready.status).toBe(503);
      expect(ready.ms).toBeLessThan(1000);
      expect(refusalOf(await writeRecord('x'))).toEqual(redisDown);

      await down.start();
      const upAt = Date.now();
      await fund(down.url, prefix, 10);
      await until(async () => (await request(lateBase, 'GET', '/readiness')).status === 200, 15_000);
      const readyAfterMs = Date.now() - upAt;
      // The first request once ready succeeds (the bootstrap key was registered during composition).
      const first = await writeRecord('after');
      expect([first.status, first.status === 200 ? '' : first.body]).toEqual([200, '']);
      await until(async () => (await request(lateGqlBase, 'GET', '/readiness')).status === 200, 15_000);
      const gqlFirst = await askHealth();
      expect([gqlFirst.status, gqlFirst.body]).toEqual([200, '{"data":{"health":"ok"}}']);
      expect(readyAfterMs).toBeLessThan(5000);
      process.stdout.write(`late api: ready ${readyAfterMs} ms after Redis came back\n`);
    } catch (e) {
      const tail = (app: App) => app.output().split('\n').slice(-15).join('\n');
      throw new Error(`${(e as Error).message}\n--- api:\n${tail(late)}\n--- graphql:\n${tail(lateGql)}`);
    }
  });
});
