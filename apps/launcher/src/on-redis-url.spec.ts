/**
 * `npm start` (the compiled launcher and apps) on the test Redis, one node of a cluster on the
 * cluster topologies (PROOFLINE_TEST_REDIS=cluster1|cluster3; CI runs it on three masters):
 * REDIS_URL names that node only, so every process asks whether it is a cluster.
 */
import { randomBytes } from 'node:crypto';
import { deleteByPrefix, scanKeys } from '@proofline/shared-redis';
import { eventually, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { compiledLauncher, onTestRedis, writeAndProve } from './testing/compiled-launcher';

jest.setTimeout(90_000);

const { build, productionStart, launch } = compiledLauncher('launcher-cluster-spec');

beforeAll(build);

describe('npm start on the Redis REDIS_URL names', () => {
  it('runs every app on the Redis REDIS_URL names, one node of a cluster on cluster topologies (the devnet node too, DEVNET_REDIS_URL): ready, workers beating, a write published and proven', async () => {
    const prefix = uniquePrefix('launchcl');
    const key = `idty_${randomBytes(16).toString('hex')}`;
    // The URL only: each process asks whether it names a cluster.
    const { env, apiPort, graphqlPort, devnetPort } = await productionStart({
      ...onTestRedis(prefix, key),
      API_PROCESSES: '1',
    });
    const run = launch(env);
    const redis = testRedisClient();
    try {
      await eventually(async () => run.output().includes('"msg":"ready:'), 60_000, 100);
      expect(run.output()).toContain('using Redis at');
      expect(run.output()).not.toContain('starting redis-server');
      const ready = await eventually(
        async () => {
          const res = await fetch(`http://127.0.0.1:${apiPort}/readiness`);
          const body = (await res.json()) as { status: string; checks: { workers: number | null } };
          return res.status === 200 && (body.checks.workers ?? 0) >= 1 ? body : undefined;
        },
        30_000,
        100,
      );
      expect(ready.status).toBe('ready');
      await eventually(async () => (await fetch(`http://127.0.0.1:${graphqlPort}/readiness`)).status === 200, 30_000);
      // The devnet node mines on the same Redis, and the workers' confirmation pass reads its tip.
      const blocks = async () =>
        ((await (await fetch(`http://127.0.0.1:${devnetPort}/chain/info`)).json()) as { blocks: number }).blocks;
      await eventually(async () => (await blocks()) >= 2, 30_000, 100);
      // A write is accepted, published and proven.
      const { write, proof } = await writeAndProve(`http://127.0.0.1:${apiPort}`, key, 'on the cluster', 30_000);
      expect(write.status).toBe(200);
      expect(proof).toBeTruthy();
      // Every process wrote under the prefix: found on whichever master holds each key.
      expect((await scanKeys(redis, `${prefix}:*`)).length).toBeGreaterThan(0);
      expect(run.output()).not.toMatch(/MOVED|CROSSSLOT|ClusterAllFailed/);
    } finally {
      process.kill(-(run.child.pid ?? 0), 'SIGINT');
      await run.exited;
      await deleteByPrefix(redis, prefix);
      await redis.quit();
    }
  });
});
