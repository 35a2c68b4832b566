// Shared test harness of the API specs (not a spec itself): the real app on port 0 with real
// Redis and BullMQ under a test prefix, key workers started in-process, and helpers to seed
// keys directly in the store and to call the API. Records specs reuse it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClaimsService } from '@proofline/identity-claims';
import { IdentityService, startIdentityKeyWorker } from '@proofline/identity-feature';
import type { KeyWorkerOptions, RunningKeyWorker } from '@proofline/identity-feature';
import type { Permission } from '@proofline/identity-domain';
import { loadConfig, systemClock } from '@proofline/shared-config';
import type { Clock, Config } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { createRedis } from '@proofline/shared-redis';
import { testRedisUrl } from '@proofline/shared-testing';
import { createApp } from '../app';
import type { ApiDeps } from '../deps';
import { seedKey as seedStoredKey } from '@proofline/identity-testing';
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
  /** Adds services of other features (e.g. records) to the deps; `close` runs before ours. */
  readonly extend?: (base: ApiDeps & { identity: IdentityService }) => Promise<{ deps?: Partial<ApiDeps>; close?: () => Promise<void> }>;
}

export interface RunningApi {
  readonly baseUrl: string;
  readonly deps: ApiDeps & { identity: IdentityService };
  close(): Promise<void>;
}

/** Builds the real app (own Redis connections) and listens on a free port. */
export async function startApi(opts: StartApiOptions): Promise<RunningApi> {
  const config = testConfig(opts.prefix, opts.env);
  const logger = createLogger({ level: 'silent', name: 'test-api' });
  const clock = opts.clock ?? systemClock;
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 2 });
  const identity = await IdentityService.open({ config, logger, redis, clock });
  const base = { config, logger, redis, clock, claims: new ClaimsService({ config, redis, clock }), identity };
  const extra = opts.extend ? await opts.extend(base) : {};
  const deps = { ...base, ...(extra.deps ?? {}) } as ApiDeps & { identity: IdentityService };
  const server = http.createServer(createApp(deps));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    deps,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      if (extra.close) await extra.close();
      await identity.close();
      await redis.quit();
    },
  };
}

/** Starts a key worker in-process (own connections) on the same prefix and environment. */
export async function startKeyWorker(opts: { prefix: string; env?: Record<string, string>; worker?: KeyWorkerOptions['worker'] }): Promise<RunningKeyWorker> {
  return startIdentityKeyWorker({
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
  return seedStoredKey(redis, { prefix: config.redisPrefix, lifetimeDays: config.keyLifetimeDays }, { ...opts, createdAt: opts.createdAt ?? clock.now() });
}

export interface CallResult {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON when the response is JSON, else the text ('' when empty). */
  readonly body: unknown;
}

/**
 * One HTTP call. `body` objects are sent as JSON; strings are sent as they are (set
 * `contentType` to test other types).
 */
export async function call(
  baseUrl: string | RunningApi,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; contentType?: string; headers?: Record<string, string> } = {},
): Promise<CallResult> {
  const url = `${typeof baseUrl === 'string' ? baseUrl : baseUrl.baseUrl}${path}`;
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key !== undefined) headers['x-api-key'] = opts.key;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] = opts.contentType ?? 'application/json';
  }
  const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  let parsed: unknown = text;
  if (text.length > 0 && /json/.test(type)) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed };
}
