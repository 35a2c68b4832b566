/**
 * The black-box check (`npm run blackbox`, tools/blackbox) as a process against `npm start` (the
 * compiled launcher and apps) on the test Redis: one node of a cluster on the cluster topologies,
 * named by REDIS_URL alone. Every check must pass, twice in a row on the same deployment (the first
 * run's keys are gone again, so the key limit is checked from the same usage).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { deleteByPrefix } from '@proofline/shared-redis';
import { testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { baseEnv, compiledLauncher, onTestRedis } from './testing/compiled-launcher';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '../../..');
const { build, productionStart, launch } = compiledLauncher('launcher-blackbox-spec');

/** What `tools/blackbox/run.ts --json` prints. */
interface Report {
  results: { name: string; outcome: 'ok' | 'failed' | 'skipped'; ms: number; detail?: string }[];
  retries: Record<string, number>;
  ms: number;
}

/** The checks, in the order they run: a check that disappears fails this spec too. */
const CHECKS = [
  'the deployment is ready (REST and GraphQL readiness, GraphQL health)',
  'independent records: SHA256, Base64, a salt, a chain of encoders',
  'independent records: status, content GET and HEAD, match',
  'independent records: an Idempotency-Key replays the same write',
  'linked records: create, update with its updateToken, a stale token refused',
  'linked records: status updatable, content GET and HEAD',
  'linked records: match with prevTxId',
  'linked records: delete terminates the chain; navigate both ways',
  'linked records: of 8 concurrent updates of one record exactly one wins',
  'bad input: 4xx application/problem+json with an errorCode',
  'identity keys: create (raw key once), list, usage, revoke, re-activate, delete',
  'identity keys: no privilege escalation',
  'identity keys: the per-tenant limit',
  'legacy key endpoints: Deprecation, Sunset and Link headers',
  'verifier claims: GET /auth/granted-claims with a JWT',
  "every record reaches a Merkle proof that @bsv/sdk's MerklePath verifies against the headers source",
  'receipts: Atomic BEEF that @bsv/sdk reads and verifies, the bytes on chain',
  'GraphQL: chain traversal, records and blocks over HTTP',
  'GraphQL: a confirmation subscription over SSE follows a record until it is mined',
  'GraphQL: key queries over HTTP',
];

/** Runs the CLI as a user would (tsx, as `npm run blackbox` does); resolves with its exit code and output. */
function blackbox(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      path.join(ROOT, 'tools', 'blackbox', 'run.ts'),
      ...args,
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

beforeAll(build);

describe('npm run blackbox against npm start', () => {
  it('passes every check, twice, against the whole service on the Redis REDIS_URL names (one node of a cluster on cluster topologies)', async () => {
    const prefix = uniquePrefix('blackbox');
    const key = `idty_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;
    const { env, apiPort, graphqlPort, devnetPort } = await productionStart({
      ...onTestRedis(prefix, key),
      // npm start's defaults otherwise: two API processes on one port, one worker process.
      API_PROCESSES: '2',
      // The legacy endpoints' live behaviour (past the default sunset they only answer 410).
      LEGACY_SUNSET: '2099-01-01T00:00:00Z',
    });
    const run = launch(env);
    const redis = testRedisClient();
    try {
      const args = [
        '--url',
        `http://127.0.0.1:${apiPort}`,
        '--graphql',
        `http://127.0.0.1:${graphqlPort}`,
        '--headers',
        `http://127.0.0.1:${devnetPort}`,
        '--key',
        key,
        '--wait-ms',
        '60000',
        '--proof-timeout-ms',
        '30000',
        '--json',
      ];
      const cliEnv = baseEnv({ AUTH_JWT_SECRET: String(env['AUTH_JWT_SECRET']) });
      for (const round of [1, 2]) {
        const out = await blackbox(args, cliEnv);
        const report = JSON.parse(out.stdout.trim().split('\n').pop() ?? '{}') as Report;
        const notOk = report.results.filter((r) => r.outcome !== 'ok');
        expect({ round, notOk, stderr: out.stderr }).toEqual({ round, notOk: [], stderr: '' });
        expect(report.results.map((r) => r.name)).toEqual(CHECKS);
        expect(out.code).toBe(0);
      }
      expect(run.output()).not.toMatch(/\bMOVED\b|CROSSSLOT|ClusterAllFailed/);
      // No error logged but the 503 FUNDING_EXHAUSTED answers before the wallet's first split.
      const errors = run
        .output()
        .split('\n')
        .filter((line) => line.includes('"level":"error"') && !line.includes('"errorCode":"FUNDING_EXHAUSTED"'));
      expect(errors).toEqual([]);
    } finally {
      process.kill(-(run.child.pid ?? 0), 'SIGINT');
      await run.exited;
      await deleteByPrefix(redis, prefix);
      await redis.quit();
    }
  });
});
