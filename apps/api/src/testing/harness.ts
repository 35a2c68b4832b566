// Shared test harness of the API specs (not a spec itself): the real app (the production
// composition, composeApi) on port 0 with real Redis and BullMQ under a test prefix, key
// workers started in-process, and helpers to seed keys directly in the store and to call the
// API. Records specs reuse it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Identity, KeyWorkerOptions, RunningKeyWorker } from '@proofline/identity-feature';
import type { Permission } from '@proofline/identity-domain';
import { loadConfig, systemClock } from '@proofline/shared-config';
import type { Clock, Config } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { testRedisUrl } from '@proofline/shared-testing';
import { createApp } from '../app';
import { composeApi } from '../compose';
import type { ApiRecords } from '../compose';
import type { ApiDeps } from '../deps';
import { seedKey as seedStoredKey, startTestKeyWorker } from '@proofline/identity-testing';
import { fundPool } from '@proofline/records-testing';
import type { SeededKey } from '@proofline/identity-testing';

/** Test configuration: the private test Redis, the given prefix, silent logs, then `env`. */
export function testConfig(prefix: string, env: Record<string, string> = {}): Config {
  return loadConfig({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent', ...env });
}

export interface StartApiOptions {
  /** Redis prefix of this test (uniquePrefix()); the API and its workers must share it. */
  readonly prefix: string;
  /** Defaults to the system clock; pass a ManualClock to move time. */
  readonly clock?: Clock;
  /** Extra environment (e.g. KEY_LIMIT, LEGACY_SUNSET). */
  readonly env?: Record<string, string>;
  /**
   * Funding UTXOs (1000 sat each) added to the wallet's pool before the API serves, so writes
   * can reserve them (default 100; 0 leaves the pool empty). Their parents are fake: for specs
   * that do not publish. Specs that publish use the records fixture, funded by the devnet node.
   */
  readonly fund?: number;
  /** Port to listen on (default 0: any free port); the ARC callback specs need it before start. */
  readonly port?: number;
  /** Overrides or adds deps on top of the production composition; `close` runs before ours. */
  readonly extend?: (
    base: ApiDeps & { identity: Identity },
  ) => Promise<{ deps?: Partial<ApiDeps>; close?: () => Promise<void> }>;
}

export interface RunningApi {
  readonly baseUrl: string;
  readonly deps: ApiDeps & { identity: Identity };
  /** The records and chain scopes the composition built (store, publication queue, chain adapters). */
  readonly recordsScope: ApiRecords;
  close(): Promise<void>;
}

/**
 * Builds the real app with the production composition (`composeApi`: its own Redis connections,
 * every scope) on the test's prefix, clock and environment, and listens on a free port.
 */
export async function startApi(opts: StartApiOptions): Promise<RunningApi> {
  const config = testConfig(opts.prefix, opts.env);
  const logger = createLogger({ level: 'silent', name: 'test-api' });
  const composed = await composeApi(config, logger, opts.clock ?? systemClock);
  const fund = opts.fund ?? 100;
  if (fund > 0) await fundPool(composed.recordsScope.wallet.pool, fund, 1000);
  const extra = opts.extend ? await opts.extend(composed.deps) : {};
  const deps: ApiDeps & { identity: Identity } = { ...composed.deps, ...(extra.deps ?? {}) };
  const server = http.createServer(createApp(deps));
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    deps,
    recordsScope: composed.recordsScope,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      if (extra.close) await extra.close();
      await composed.close();
    },
  };
}

/** Starts a key worker in-process (own connection) on the same prefix and environment. */
export async function startKeyWorker(opts: {
  prefix: string;
  env?: Record<string, string>;
  worker?: KeyWorkerOptions['worker'];
}): Promise<RunningKeyWorker> {
  return startTestKeyWorker({
    config: testConfig(opts.prefix, opts.env),
    logger: createLogger({ level: 'silent', name: 'test-key-worker' }),
    ...(opts.worker ? { worker: opts.worker } : {}),
  });
}

export type { SeededKey } from '@proofline/identity-testing';

/**
 * Writes a key straight into the store (no worker, no limit): for auth tests. `createdAt`
 * defaults to the API clock's now; `revoked` sets revokedAt.
 */
export function seedKey(
  api: RunningApi,
  opts: { tenant?: string; permissions: readonly Permission[]; createdAt?: Date; revoked?: boolean; name?: string },
): Promise<SeededKey> {
  const { config, redis, clock } = api.deps;
  return seedStoredKey(
    redis,
    { prefix: config.redisPrefix, lifetimeDays: config.keyLifetimeDays },
    { ...opts, createdAt: opts.createdAt ?? clock.now() },
  );
}

export { call, send } from './rest-client';
export type { CallResult, SendOptions } from './rest-client';

/**
 * The end of a spec that runs the API against the devnet node: closes what it started, in order
 * (the worker side, the API, an ARC proxy, the node; those it has), then deletes the test's keys
 * and quits the spec's own connection.
 */
export async function closeDevnetSpec(o: {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly worker?: { close(): Promise<void> };
  readonly api?: RunningApi;
  readonly proxy?: { close(): Promise<void> };
  readonly dev?: { close(): Promise<void> };
}): Promise<void> {
  await o.worker?.close();
  await o.api?.close();
  await o.proxy?.close();
  await o.dev?.close();
  await deleteByPrefix(o.redis, o.prefix);
  await o.redis.quit();
}
