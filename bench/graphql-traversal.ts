/**
 * `npx tsx bench/graphql-traversal.ts`: times GraphQL traversal of a linked chain with content.
 * Starts a private redis-server on a free port (or uses BENCH_REDIS_URL), writes a chain of
 * BENCH_LINKS (1000) records through the records write use cases (real signed BSV transactions), publishes
 * them with the real publisher worker and mines them into a devnet block (so every record has a
 * confirmation and a TSC proof), then runs through the real yoga app (in process, yoga.fetch):
 *   1. one query: chain(first: 1000) with content, confirmation + proof, previous/next
 *   2. ten pages of 100 with the same selection (cursor walk)
 * and prints min / median / p95 over BENCH_RUNS (10) runs after 2 warm-ups, plus the CPU time the
 * one-query case costs this process (steadier than wall time when other processes share the CPU).
 * `npm run bench` runs it with NODE_ENV=production and NODE_OPTIONS=--max-semi-space-size=64, as
 * `npm start` runs the GraphQL process (graphql-js skips its development-only checks; see
 * apps/launcher/src/services.ts for the young generation).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startArcDevnet } from '@proofline/devnet-testing';
import { createBootstrapKey } from '@proofline/identity-feature';
import { createRecords } from '@proofline/records-feature';
import { createPublication } from '@proofline/records-publication';
import { loadConfig, systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { connectRedis, createBullRedis, createRedis, resolveRedis } from '@proofline/shared-redis';
import { createGraphQL } from '../apps/graphql/src/app';
import { createGraphQLDeps } from '../apps/graphql/src/deps';
import { freePort } from '@proofline/shared-testing';

const LINKS = Number(process.env['BENCH_LINKS'] ?? 1000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 10);

async function waitForRedis(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const probe = createRedis(url, { maxRetriesPerRequest: 1, lazyConnect: true, retryStrategy: () => null });
    probe.on('error', () => undefined); // refused until redis-server is up
    try {
      await probe.connect();
      await probe.ping();
      await probe.quit();
      return;
    } catch {
      probe.disconnect();
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`redis at ${url} did not answer`);
}

const stats = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return `min ${at(0).toFixed(1)} ms, median ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms`;
};

async function main(): Promise<void> {
  let child: ChildProcess | undefined;
  let redisUrl = process.env['BENCH_REDIS_URL'];
  let dir: string | undefined;
  if (!redisUrl) {
    const port = await freePort();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-gql-bench-'));
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    );
    redisUrl = `redis://127.0.0.1:${port}`;
  }
  await waitForRedis(redisUrl);
  const prefix = `gqlbench${Date.now()}`;
  // BENCH_REDIS_URL may name a cluster node: the factory asks.
  const deployment = await resolveRedis({ url: redisUrl });
  const redis = connectRedis(deployment, { maxRetriesPerRequest: null });
  const bull = createBullRedis(deployment);
  // The devnet node (ARC over HTTP) in this process; the pool funded by a real coinbase split.
  const dev = await startArcDevnet({ redis, prefix });
  const config = loadConfig({
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    NODE_ENV: 'production',
    AUTH_JWT_SECRET: 'bench-graphql-traversal-secret-0123456789',
    MAX_LINKS: String(Math.max(LINKS, 1000)),
    ...dev.env,
  });
  const logger = createLogger({ level: 'silent', name: 'bench' });
  const devnet = dev.chain;
  const { pool } = dev;
  const publication = createPublication({
    redis,
    bull,
    prefix,
    config,
    chain: devnet,
    pool,
    clock: systemClock,
    logger,
  });
  const { queue } = publication;
  await dev.fund(LINKS + 10, 1000);
  const funding = { pool, feeRate: () => config.wallet.feeFloorSatsPerKb };
  const records = createRecords({
    config,
    clock: systemClock,
    logger,
    redis,
    prefix,
    builder: devnet.builder,
    funding,
    reader: devnet.reader,
    queue,
  });
  const writer = records.writes;

  let t = performance.now();
  const caller = { tenant: 'default' };
  const chain = [
    (await writer.createLinked(caller, { body: Buffer.from('link 0 '.repeat(20)), encode: undefined })).txId,
  ];
  for (let i = 1; i < LINKS; i++) {
    const prev = chain[chain.length - 1] ?? '';
    chain.push(
      (
        await writer.updateLinked(caller, prev, {
          body: Buffer.from(`link ${i} `.repeat(20)),
          encode: undefined,
          updateToken: undefined,
        })
      ).txId,
    );
  }
  process.stdout.write(
    `wrote a chain of ${LINKS} linked records (~140 B each) through RecordWrites in ${(performance.now() - t).toFixed(0)} ms\n`,
  );

  // publish in order (one worker, concurrency 1: FIFO, no successor waits) and mine one block
  t = performance.now();
  const publisher = publication.startPublisher({ concurrency: 1, sweepEveryMs: 0 });
  for (;;) {
    const states = await records.reads.metaMany(chain);
    if (states.every((m) => m?.state === 'published')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await publisher.close();
  await dev.node.mineBlock();
  await dev.node.mineBlock();
  // One confirmation pass proves up to 500 watched txs: run until every one is proven.
  while ((await devnet.store.watchedCount()) > 0) {
    const pass = await publication.confirmOnce();
    if (pass.proven === 0) break;
  }
  const mined = (await records.reads.confirmationMany(chain)).filter((c) => c !== null).length;
  process.stdout.write(
    `published and mined in ${(performance.now() - t).toFixed(0)} ms (${mined}/${LINKS} with a TSC proof)\n`,
  );

  const deps = await createGraphQLDeps(config, logger, systemClock);
  const yoga = createGraphQL(deps);
  const key = await createBootstrapKey({ redis, config, clock: systemClock }, 'default');
  const query = `query($txId: String!, $first: Int, $after: String) { linkedRecord(txId: $txId) { ... on LinkedRecord { chain(first: $first, after: $after) {
    pageInfo { hasNextPage endCursor }
    edges { cursor node { txId kind position updatable contentType content { text base64 }
      confirmation { confirmedBlocks blockHash blockTimestamp merkleProof { index txOrId target nodes targetType proofType composite } }
      previous { txId } next { txId } } } } } } }`;
  const run = async (variables: Record<string, unknown>) => {
    const res = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ query, variables }),
    });
    const text = await res.text();
    const body = JSON.parse(text) as {
      errors?: unknown;
      data: { linkedRecord: { chain: { edges: unknown[]; pageInfo: { endCursor: string } } } };
    };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return { bytes: text.length, chain: body.data.linkedRecord.chain };
  };

  const whole: number[] = [];
  const wholeCpu: number[] = [];
  let size = 0;
  for (let i = 0; i < RUNS + 2; i++) {
    const s = performance.now();
    const c = process.cpuUsage();
    const out = await run({ txId: chain[0], first: LINKS });
    if (out.chain.edges.length !== LINKS) throw new Error('short page');
    if (i >= 2) {
      whole.push(performance.now() - s);
      const used = process.cpuUsage(c);
      wholeCpu.push((used.user + used.system) / 1000);
    }
    size = out.bytes;
  }
  process.stdout.write(
    `1. one query, chain(first: ${LINKS}) with content + proofs (${(size / 1024).toFixed(0)} KiB response): ${stats(whole)}\n`,
  );
  // CPU time of this process (yoga + the client's parse; not Redis): steadier than wall time on a busy machine
  process.stdout.write(`   CPU time of that query in this process: ${stats(wholeCpu)}\n`);

  const paged: number[] = [];
  const pageSize = Math.max(1, Math.floor(LINKS / 10));
  for (let i = 0; i < RUNS + 2; i++) {
    const s = performance.now();
    let after: string | undefined;
    for (let p = 0; p < 10; p++)
      after = (await run({ txId: chain[0], first: pageSize, after })).chain.pageInfo.endCursor;
    if (i >= 2) paged.push(performance.now() - s);
  }
  process.stdout.write(`2. ten pages of ${pageSize} (cursor walk, same selection): ${stats(paged)} for all ten\n`);

  await deps.close();
  await dev.close();
  await publication.close();
  await bull.quit();
  await redis.quit();
  if (child) {
    child.kill('SIGTERM');
    await new Promise((r) => child?.once('exit', r));
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
