// Shared set-up of the GraphQL specs (not a spec itself): the production GraphQL composition
// (createGraphQLDeps) on a private prefix, pointed at the devnet node (`startArcDevnet`: ARC over
// HTTP, a block every BLOCK_INTERVAL_MS, the wallet's pool funded by a real coinbase split), a
// writer built by the same factories as apps/api's, and on demand the real publisher and
// confirmation workers as apps/worker composes them (both by composePublicationSide:
// createArcChain, createPublication, createRecords).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startArcDevnet } from '@proofline/devnet-testing';
import type { ArcDevnet } from '@proofline/devnet-testing';
import { fundPool } from '@proofline/records-testing';
import type { Permission } from '@proofline/identity-domain';
import type { RecordWrites } from '@proofline/records-feature';
import { composePublicationSide } from '@proofline/records-publication-testing';
import { loadConfig, systemClock } from '@proofline/shared-config';
import type { Clock, Config } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { testRedisClient, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { WebhookStore } from '@proofline/webhooks-data-access';
import { watchPublications } from '@proofline/webhooks-feature';
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
  readonly writer: RecordWrites;
  /** Test-side Redis connection (seeding, assertions). */
  readonly redis: RedisClient;
  gql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    key?: string,
  ): Promise<GqlResult<T>>;
  seedKey(opts: {
    permissions: readonly Permission[];
    tenant?: string;
    revoked?: boolean;
    createdAt?: Date;
    name?: string;
  }): Promise<{ id: string; rawKey: string }>;
  /** The devnet node the deployment talks to (it mines every BLOCK_INTERVAL_MS), and the funded pool. */
  readonly dev: ArcDevnet;
  /** Starts the real publisher and confirmation workers (own connections). */
  startChain(): Promise<void>;
  /** Another GraphQL app (own deps) on the same prefix, listening on a free port. */
  listen(deps?: GraphQLDeps): Promise<{ url: string; close(): Promise<void> }>;
  close(): Promise<void>;
}

/**
 * `fund`: funding UTXOs (1000 sat) the writer can reserve (default 300; each write takes one until
 * its publication confirms the change). `publish`: the specs that call `startChain()` need UTXOs
 * the node knows (a real coinbase split); the others get fast fake ones (`fundPool`).
 */
export async function startGraphQL(
  env: Record<string, string> = {},
  clock: Clock = systemClock,
  options: { fund?: number; publish?: boolean } = {},
): Promise<GraphQLFixture> {
  const prefix = uniquePrefix('gql');
  const nodeRedis = testRedisClient({ maxRetriesPerRequest: null });
  // What the set-up opened so far, closed in reverse when a later step fails: a spec whose
  // beforeAll threw never calls close(), and a client left open keeps jest from exiting.
  const opened: (() => Promise<unknown>)[] = [() => nodeRedis.quit()];
  try {
    const blockIntervalMs = Number(env['BLOCK_INTERVAL_MS'] ?? 200);
    const dev = await startArcDevnet({ redis: nodeRedis, prefix, blockIntervalMs, pollMs: 100 });
    opened.push(() => dev.close());
    const config = loadConfig({
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      LOG_LEVEL: 'silent',
      BLOCK_INTERVAL_MS: String(blockIntervalMs),
      ...dev.env,
      ...env,
    });
    const logger = createLogger({ level: 'silent', name: 'test-graphql' });
    const deps = await createGraphQLDeps(config, logger, clock);
    opened.push(() => deps.close());
    const yoga = createGraphQL(deps);
    // Writes reserve funding from the wallet's pool: real UTXOs the node knows (a coinbase split) when the spec publishes.
    const { pool } = dev;
    // The writer's side of publication, as apps/api runs it: the write use cases and only the producer.
    const writerSide = composePublicationSide({ prefix, config, pool, clock, logger });
    opened.push(() => writerSide.close());
    const { redis } = writerSide;
    if (options.publish) await dev.fund(options.fund ?? 300, 1000);
    else await fundPool(pool, options.fund ?? 300, 1000);
    const writer = writerSide.records().writes;
    const closers: (() => Promise<unknown>)[] = [];

    const fixture: GraphQLFixture = {
      prefix,
      config,
      deps,
      yoga,
      writer,
      redis,
      dev,
      async gql(query, variables, key) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (key !== undefined) headers['x-api-key'] = key;
        const res = await yoga.fetch('http://localhost/graphql', {
          method: 'POST',
          headers,
          body: JSON.stringify({ query, variables }),
        });
        return { status: res.status, ...((await res.json()) as object) };
      },
      async seedKey(opts) {
        const { id, rawKey } = await seedStoredKey(
          redis,
          { prefix, lifetimeDays: config.keyLifetimeDays },
          { ...opts, createdAt: opts.createdAt ?? clock.now() },
        );
        return { id, rawKey };
      },
      async startChain() {
        // The worker side as apps/worker composes it, on its own connections.
        const worker = composePublicationSide({
          prefix,
          config,
          pool,
          clock,
          logger,
          webhooks: (workerRedis) => (publisher) =>
            watchPublications(publisher, { store: new WebhookStore(workerRedis, prefix), prefix, clock }),
        });
        worker.publication.startPublisher({ concurrency: 8, sweepEveryMs: 0 });
        await worker.publication.startConfirmations();
        closers.push(() => worker.close());
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
        await writerSide.close();
        await deps.close();
        await dev.close();
        await deleteByPrefix(nodeRedis, prefix);
        await nodeRedis.quit();
      },
    };
    return fixture;
  } catch (err) {
    for (const close of opened.reverse()) await close().catch(() => undefined);
    throw err;
  }
}

/** Writes a linked chain of `length` records (create + updates) through the real write path. */
export async function writeChain(
  writer: RecordWrites,
  length: number,
  opts: { tenant?: string; encode?: string; body?: (i: number) => string } = {},
): Promise<string[]> {
  const caller = { tenant: opts.tenant ?? 'default' };
  const body = opts.body ?? ((i: number) => `version ${i}`);
  const txIds = [(await writer.createLinked(caller, { body: Buffer.from(body(0)), encode: opts.encode })).txId];
  for (let i = 1; i < length; i++) {
    const prev = txIds[txIds.length - 1] ?? '';
    txIds.push(
      (
        await writer.updateLinked(caller, prev, {
          body: Buffer.from(body(i)),
          encode: opts.encode,
          updateToken: undefined,
        })
      ).txId,
    );
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
