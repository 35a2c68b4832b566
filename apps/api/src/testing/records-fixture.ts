// Shared set-up of the record route specs (not a spec itself): the real app on port 0, real Redis
// and BullMQ, the in-memory chain double of the chain ports, and a stand-in for the identity
// auth middleware (x-api-key -> tenant and permissions) until the identity harness is wired.
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import type { ConnectionOptions } from 'bullmq';
import type { Request, RequestHandler } from 'express';
import { ClaimsService } from '@proofline/identity-claims';
import { BullPublishQueue, InMemoryChain, RecordsService, startRecordsPublisher } from '@proofline/records-feature';
import type { RunningPublisher } from '@proofline/records-feature';
import { RecordStore } from '@proofline/records-data-access';
import { loadConfig, systemClock } from '@proofline/shared-config';
import type { Config } from '@proofline/shared-config';
import { AppError } from '@proofline/shared-errors';
import { bullPrefix } from '@proofline/shared-jobs';
import { createLogger } from '@proofline/shared-logger';
import { bullConnection } from '@proofline/shared-redis';
import type { Redis } from '@proofline/shared-redis';
import { testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';
import { createApp } from '../app';
import type { RecordsAuth } from '../routes/records-http';

/** x-api-key values the stand-in auth knows. */
export const KEYS = {
  writerA: 'writer-a',
  writerA2: 'writer-a2',
  writerB: 'writer-b',
  auditorA: 'auditor-a',
} as const;

const PRINCIPALS: Record<string, { tenant: string; write: boolean }> = {
  [KEYS.writerA]: { tenant: 'tenant-a', write: true },
  [KEYS.writerA2]: { tenant: 'tenant-a', write: true },
  [KEYS.writerB]: { tenant: 'tenant-b', write: true },
  [KEYS.auditorA]: { tenant: 'tenant-a', write: false },
};

function principal(req: Request) {
  const p = PRINCIPALS[req.header('x-api-key') ?? ''];
  if (!p) throw new AppError({ errorCode: 'UNAUTHORIZED', httpStatus: 401, detail: 'invalid authentication credentials' });
  return p;
}

export const fakeAuth: RecordsAuth = {
  read: ((req, _res, next) => {
    principal(req);
    next();
  }) as RequestHandler,
  write: ((req, _res, next) => {
    if (!principal(req).write) throw new AppError({ errorCode: 'FORBIDDEN', httpStatus: 403, detail: 'needs Issuer_Admin or Issuer_User' });
    next();
  }) as RequestHandler,
  caller: (req) => ({ tenant: principal(req).tenant }),
};

export interface RecordsFixture {
  readonly base: string;
  readonly prefix: string;
  readonly redis: Redis;
  readonly config: Config;
  readonly chain: InMemoryChain;
  readonly store: RecordStore;
  readonly queue: BullPublishQueue;
  /** Starts the publisher worker (real BullMQ) on demand. */
  startPublisher(): RunningPublisher;
  /** Every key under the prefix except BullMQ's (to assert "nothing written"). */
  recordKeys(): Promise<string[]>;
  request(method: string, path: string, opts?: { key?: string | null; body?: Uint8Array | string; type?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

export async function startRecordsFixture(env: Record<string, string> = {}): Promise<RecordsFixture> {
  const prefix = uniquePrefix('rec');
  const { redis, cleanup } = testRedis(prefix);
  const config = loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent', MAX_LINKS: '5', MAX_RECORD_BYTES: '1024', ...env });
  const logger = createLogger({ level: 'silent', name: 'test' });
  const chain = new InMemoryChain();
  const store = new RecordStore(redis, prefix);
  const queue = new BullPublishQueue(bullConnection(config.redisUrl) as ConnectionOptions, bullPrefix(prefix));
  const service = new RecordsService({ config, clock: systemClock, store, builder: chain, reader: chain, queue, logger });
  const claims = new ClaimsService({ config, redis, clock: systemClock });
  const app = createApp({ config, logger, redis, clock: systemClock, claims, records: { service, auth: fakeAuth } });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const publishers: RunningPublisher[] = [];
  return {
    base,
    prefix,
    redis,
    config,
    chain,
    store,
    queue,
    startPublisher() {
      const p = startRecordsPublisher({
        connection: bullConnection(config.redisUrl) as ConnectionOptions,
        bullPrefix: bullPrefix(prefix),
        store,
        chain,
        clock: systemClock,
        logger,
        concurrency: 4,
        sweepEveryMs: 0,
      });
      publishers.push(p);
      return p;
    },
    async recordKeys() {
      const keys = await redis.keys(`${prefix}:records:*`);
      return keys.sort();
    },
    request(method, path, opts = {}) {
      const headers: Record<string, string> = {};
      const key = opts.key === undefined ? KEYS.writerA : opts.key;
      if (key !== null) headers['x-api-key'] = key;
      if (opts.body !== undefined && opts.type !== null) headers['content-type'] = opts.type ?? 'application/octet-stream';
      return fetch(`${base}${path}`, { method, headers, ...(opts.body !== undefined ? { body: opts.body as unknown as string } : {}) });
    },
    async close() {
      await new Promise((r) => server.close(r));
      for (const p of publishers) await p.close();
      await queue.close();
      await cleanup();
    },
  };
}
