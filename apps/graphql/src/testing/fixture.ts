// Shared set-up of the GraphQL specs (not a spec itself): the real GraphQL deps (RecordsService,
// IdentityService, devnet reader, Redis pub/sub) on a private prefix, a writer RecordsService
// composed exactly like apps/api's (BSV builder, devnet reader, BullMQ publish queue), and on
// demand the real publisher worker and block producer worker.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConnectionOptions } from 'bullmq';
import { BsvTransactionBuilder } from '@proofline/chain-bsv';
import { DevnetBlockProducer, DevnetPublisher, DevnetReader, startBlockProducerWorker } from '@proofline/chain-devnet';
import type { RunningBlockProducer } from '@proofline/chain-devnet';
import type { Permission } from '@proofline/identity-domain';
import { RecordStore } from '@proofline/records-data-access';
import { BullPublishQueue, RecordsService, startRecordsPublisher } from '@proofline/records-feature';
import type { RunningPublisher } from '@proofline/records-feature';
import { loadConfig, systemClock } from '@proofline/shared-config';
import type { Clock, Config } from '@proofline/shared-config';
import { bullPrefix } from '@proofline/shared-jobs';
import { createLogger } from '@proofline/shared-logger';
import { bullConnection, createRedis, deleteByPrefix } from '@proofline/shared-redis';
import type { Redis } from '@proofline/shared-redis';
import { testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { createGraphQL } from '../app';
import type { GraphQLServer } from '../app';
import { createGraphQLDeps } from '../deps';
import type { GraphQLDeps, OwnedGraphQLDeps } from '../deps';
import { seedKey as seedStoredKey } from '@proofline/identity-testing';

export interface GqlResult<T = Record<string, unknown>> {
  readonly status: number;
  readonly data?: T | null;
  readonly errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string; status?: number } }[];
}

export interface GraphQLFixture {
  readonly prefix: string;
  readonly config: Config;
  readonly deps: OwnedGraphQLDeps;
  readonly yoga: GraphQLServer;
  /** Writes records through the same use case as REST (real signed BSV transactions). */
  readonly writer: RecordsService;
  /** Test-side Redis connection (seeding, assertions). */
  readonly redis: Redis;
  gql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, key?: string): Promise<GqlResult<T>>;
  seedKey(opts: { permissions: readonly Permission[]; tenant?: string; revoked?: boolean; createdAt?: Date; name?: string }): Promise<{ id: string; rawKey: string }>;
  /** Starts the real publisher and block producer workers (own connections). */
  startChain(): Promise<void>;
  /** Another GraphQL app (own deps) on the same prefix, listening on a free port. */
  listen(deps?: GraphQLDeps): Promise<{ url: string; close(): Promise<void> }>;
  close(): Promise<void>;
}

export async function startGraphQL(env: Record<string, string> = {}, clock: Clock = systemClock): Promise<GraphQLFixture> {
  const prefix = uniquePrefix('gql');
  const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent', BLOCK_INTERVAL_MS: '200', ...env });
  const logger = createLogger({ level: 'silent', name: 'test-graphql' });
  const deps = await createGraphQLDeps(config, logger, clock);
  const yoga = createGraphQL(deps);
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: null });
  const publishQueue = new BullPublishQueue(bullConnection(config.redisUrl) as ConnectionOptions, bullPrefix(prefix));
  const writer = new RecordsService({
    config,
    clock,
    logger,
    store: new RecordStore(redis, prefix),
    builder: new BsvTransactionBuilder(),
    reader: new DevnetReader(redis, prefix),
    queue: publishQueue,
  });
  const closers: (() => Promise<unknown>)[] = [];

  const fixture: GraphQLFixture = {
    prefix,
    config,
    deps,
    yoga,
    writer,
    redis,
    async gql(query, variables, key) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (key !== undefined) headers['x-api-key'] = key;
      const res = await yoga.fetch('http://localhost/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
      return { status: res.status, ...((await res.json()) as object) };
    },
    async seedKey(opts) {
      const { id, rawKey } = await seedStoredKey(redis, { prefix, lifetimeDays: config.keyLifetimeDays }, { ...opts, createdAt: opts.createdAt ?? clock.now() });
      return { id, rawKey };
    },
    async startChain() {
      const workerRedis = createRedis(config.redisUrl, { maxRetriesPerRequest: null });
      const publisher: RunningPublisher = startRecordsPublisher({
        connection: bullConnection(config.redisUrl) as ConnectionOptions,
        bullPrefix: bullPrefix(prefix),
        store: new RecordStore(workerRedis, prefix),
        chain: new DevnetPublisher(workerRedis, prefix),
        clock,
        logger,
        concurrency: 8,
        sweepEveryMs: 0,
      });
      const producer: RunningBlockProducer = await startBlockProducerWorker({
        redisUrl: config.redisUrl,
        redisPrefix: prefix,
        blockIntervalMs: config.blockIntervalMs,
        producer: new DevnetBlockProducer(workerRedis, prefix),
        clock,
        logger,
      });
      closers.push(async () => {
        await producer.close();
        await publisher.close();
        await workerRedis.quit();
      });
    },
    async listen(other) {
      const own = other ? createGraphQL(other) : yoga;
      const server = http.createServer((req, res) => void own.handle(req, res));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
      const close = async () => {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      };
      closers.push(close);
      return { url, close };
    },
    async close() {
      for (const c of closers.reverse()) await c().catch(() => undefined);
      await publishQueue.close();
      await deps.close();
      await deleteByPrefix(redis, prefix);
      await redis.quit();
    },
  };
  return fixture;
}

/** Writes a linked chain of `length` records (create + updates) through the real write path. */
export async function writeChain(writer: RecordsService, length: number, opts: { tenant?: string; encode?: string; body?: (i: number) => string } = {}): Promise<string[]> {
  const caller = { tenant: opts.tenant ?? 'default' };
  const body = opts.body ?? ((i: number) => `version ${i}`);
  const txIds = [(await writer.createLinked(caller, { body: Buffer.from(body(0)), encode: opts.encode })).txId];
  for (let i = 1; i < length; i++) {
    const prev = txIds[txIds.length - 1] ?? '';
    txIds.push((await writer.updateLinked(caller, prev, { body: Buffer.from(body(i)), encode: opts.encode, updateToken: undefined })).txId);
  }
  return txIds;
}

/** Reads an SSE response into parsed `data:` payloads until the stream ends or `until` says stop. */
export async function readSse<T>(res: Response, until: (events: T[]) => boolean = () => false): Promise<T[]> {
  const events: T[] = [];
  const reader = res.body?.getReader();
  if (!reader) return events;
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let sep: number;
    while ((sep = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, sep);
      buffer = buffer.slice(sep + 2);
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data) events.push(JSON.parse(data) as T);
    }
    if (until(events)) {
      await reader.cancel();
      break;
    }
  }
  return events;
}
