// Shared setup of the identity key endpoint specs (not a spec itself): two API instances and a
// key worker on one private prefix, a manual clock reset before every case, and a raw-key scan
// after every case over the keys that case issued, so each case stands alone.
import { identityKeys } from '@proofline/identity-data-access';
import type { IdentityKeys } from '@proofline/identity-data-access';
import { createBootstrapKey } from '@proofline/identity-feature';
import type { RunningKeyWorker } from '@proofline/identity-feature';
import { hashKey } from '@proofline/identity-domain';
import type { IdentityApiKey } from '@proofline/identity-domain';
import { ManualClock } from '@proofline/shared-config';
import type { RedisClient } from '@proofline/shared-redis';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { call, startApi, startKeyWorker } from './harness';
import type { CallResult, RunningApi } from './harness';
import { assertNoRawKeysStored } from './raw-key-scan';

export const IDENTITY_KEYS_BASE = '/api/v1/auth/identity-api-keys';
export const START = '2026-11-22T12:00:00.000Z';
export type Created = IdentityApiKey & { rawKey: string };

export interface IdentityKeysSuite {
  readonly prefix: string;
  readonly redis: RedisClient;
  readonly keys: IdentityKeys;
  readonly clock: ManualClock;
  /** Instance A and B (same prefix); available from the suite's beforeAll on. */
  readonly api: RunningApi;
  readonly apiB: RunningApi;
  /** Raw keys issued by the running case (scanned for after it). */
  readonly issued: string[];
  /** A tenant of its own with an admin key (Issuer_Admin + Verifier_Admin) that counts 1. */
  freshTenant(label: string): Promise<{ tenant: string; admin: string; adminId: string }>;
  /** The tenant's key count (its ZSET size). */
  count(tenant: string): Promise<number>;
  /** POST a key; a 201's raw key is remembered for the scan. */
  create(key: string, body: unknown, target?: RunningApi): Promise<CallResult>;
}

/** Registers the suite's hooks in the calling `describe` and returns its handles. */
export function identityKeysSuite(
  label: string,
  env: Record<string, string> = { KEY_LIMIT: '5', KEY_LIFETIME_DAYS: '60' },
): IdentityKeysSuite {
  const prefix = uniquePrefix(label);
  const { redis, cleanup } = testRedis(prefix);
  const keys = identityKeys(prefix);
  const clock = new ManualClock(START);
  let api: RunningApi | undefined;
  let apiB: RunningApi | undefined;
  let worker: RunningKeyWorker | undefined;
  const issued: string[] = [];
  const started = (a: RunningApi | undefined) => {
    if (!a) throw new Error('identityKeysSuite: the API is not started yet (use it inside a case)');
    return a;
  };

  beforeAll(async () => {
    api = await startApi({ prefix, clock, env });
    apiB = await startApi({ prefix, clock, env });
    worker = await startKeyWorker({ prefix, env });
  });
  beforeEach(() => {
    issued.length = 0;
    clock.set(START);
  });
  afterEach(async () => {
    if (issued.length > 0) await assertNoRawKeysStored(redis, prefix, issued);
  });
  afterAll(async () => {
    await worker?.close();
    await apiB?.close();
    await api?.close();
    await cleanup();
  });

  return {
    prefix,
    redis,
    keys,
    clock,
    get api() {
      return started(api);
    },
    get apiB() {
      return started(apiB);
    },
    issued,
    async freshTenant(tenantLabel) {
      const tenant = `${tenantLabel}-${Math.random().toString(36).slice(2, 8)}`;
      const admin = await createBootstrapKey({ redis, config: started(api).deps.config, clock }, tenant);
      issued.push(admin);
      return { tenant, admin, adminId: (await redis.hget(keys.keyByHash, hashKey(admin)))! };
    },
    count: (tenant) => redis.zcard(keys.tenantKeys(tenant)),
    async create(key, body, target) {
      const res = await call(target ?? started(api), 'POST', IDENTITY_KEYS_BASE, { key, body });
      if (res.status === 201) issued.push((res.body as Created).rawKey);
      return res;
    },
  };
}
