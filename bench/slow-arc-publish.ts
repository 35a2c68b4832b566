/**
 * `npx tsx bench/slow-arc-publish.ts`: records published per second against an ARC that answers
 * every submission after BENCH_ARC_DELAY_MS (1000), for each ARC_MAX_IN_FLIGHT in
 * BENCH_IN_FLIGHT (`1,4`). In one process: a private redis-server (or BENCH_REDIS_URL), the
 * devnet node, a loopback HTTP proxy in front of it that holds each `POST /v1/tx(s)` for the delay
 * (everything else passes straight through), the real publisher (createPublication, WORKER_CONCURRENCY
 * jobs, the batching publisher) and the real write use cases. Per setting it writes
 * BENCH_RECORDS (1500) independent records and BENCH_CHAINS (20) linked chains of
 * BENCH_VERSIONS (8) versions (each update written as soon as its previous version is accepted),
 * and times from the first write until every record is published (ARC answered it). Prints one
 * line per setting: records/s, requests sent, mean request size, peak requests in flight.
 * ARC_MAX_IN_FLIGHT=1 is the publisher as it was before several requests could be out.
 */
import { startArcDevnet, startArcProxy } from '@proofline/devnet-testing';
import { composePublicationSide } from '@proofline/records-publication-testing';
import { loadConfig } from '@proofline/shared-config';
import { connectRedis, deleteByPrefix, resolveRedis } from '@proofline/shared-redis';
import { privateRedis } from './private-redis';

const DELAY_MS = Number(process.env['BENCH_ARC_DELAY_MS'] ?? 1000);
const IN_FLIGHT = (process.env['BENCH_IN_FLIGHT'] ?? '1,4').split(',').map(Number);
const RECORDS = Number(process.env['BENCH_RECORDS'] ?? 1500);
const CHAINS = Number(process.env['BENCH_CHAINS'] ?? 20);
const VERSIONS = Number(process.env['BENCH_VERSIONS'] ?? 8);
const WRITERS = Number(process.env['BENCH_WRITERS'] ?? 16);

async function runOnce(url: string, inFlight: number): Promise<string> {
  const deployment = await resolveRedis({ url });
  const redis = connectRedis(deployment, { maxRetriesPerRequest: null });
  const prefix = `bench-slowarc-${process.pid}-${inFlight}`;
  const dev = await startArcDevnet({ redis, prefix });
  const proxy = await startArcProxy({ target: dev.node.url, submissionDelayMs: DELAY_MS });
  const config = loadConfig({
    ...dev.env,
    ARC_URL: proxy.url,
    ARC_MAX_IN_FLIGHT: String(inFlight),
    REDIS_URL: url,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'silent',
  });
  // The writer and the publisher in this process, as the apps compose them, ARC behind the proxy.
  const side = composePublicationSide({ prefix, config, deployment, pool: dev.pool });
  const { chain, publication } = side;
  const { writes } = side.records();
  const needed = RECORDS + CHAINS * VERSIONS + 50;
  for (let funded = 0; funded < needed; funded += 500) await dev.fund(500, 3000);
  publication.startPublisher();
  const tenant = { tenant: 'bench' };
  const txIds: string[] = [];
  const started = performance.now();
  let next = 0;
  const independent = Array.from({ length: WRITERS }, async () => {
    while (next < RECORDS) {
      next += 1;
      txIds.push((await writes.writeIndependent(tenant, { body: Buffer.from(`r${next}`), encode: undefined })).txId);
    }
  });
  const linked = Array.from({ length: CHAINS }, async (_, c) => {
    let { txId, updateToken } = await writes.createLinked(tenant, { body: Buffer.from(`c${c}v0`), encode: undefined });
    txIds.push(txId);
    for (let v = 1; v < VERSIONS; v++) {
      const updated = await writes.updateLinked(tenant, txId, {
        body: Buffer.from(`c${c}v${v}`),
        encode: undefined,
        updateToken,
      });
      txId = updated.txId;
      updateToken = updated.updateToken ?? updateToken;
      txIds.push(txId);
    }
  });
  await Promise.all([...independent, ...linked]);
  const written = performance.now();
  let remaining = txIds;
  let failed = 0;
  while (remaining.length > 0) {
    const states = await Promise.all(remaining.map((t) => publication.store.state(t)));
    failed += states.filter((s) => s === 'failed').length;
    remaining = remaining.filter((_, i) => states[i] === 'pending');
    if (remaining.length > 0) await new Promise((r) => setTimeout(r, 50));
  }
  const seconds = (performance.now() - started) / 1000;
  const sent = chain.publisher.sent;
  const line =
    `ARC_MAX_IN_FLIGHT=${inFlight}: ${txIds.length} records (${RECORDS} independent, ${CHAINS}×${VERSIONS} linked) ` +
    `written in ${((written - started) / 1000).toFixed(1)} s, all published in ${seconds.toFixed(1)} s → ` +
    `${(txIds.length / seconds).toFixed(0)} records/s; ${failed} failed; ${sent.length} requests, ` +
    `mean ${(sent.reduce((a, b) => a + b, 0) / Math.max(1, sent.length)).toFixed(1)} tx each, ` +
    `peak ${chain.publisher.peakInFlight} in flight (ARC answering after ${DELAY_MS} ms)`;
  await side.close();
  await proxy.close();
  await dev.close();
  await deleteByPrefix(redis, prefix);
  await redis.quit();
  return line;
}

async function main(): Promise<void> {
  const redisServer = await privateRedis();
  try {
    for (const n of IN_FLIGHT) console.log(await runOnce(redisServer.url, n));
  } finally {
    redisServer.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
