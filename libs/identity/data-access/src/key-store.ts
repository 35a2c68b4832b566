import path from 'node:path';
import { Repository } from 'redis-om';
import type { RedisConnection } from 'redis-om';
import { newestFirst } from '@proofline/identity-domain';
import type { ApiKeyRecord } from '@proofline/identity-domain';
import { loadLuaCommands } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { fromEntity, keySchema, toHashFields } from './key-entity';
import type { KeyEntity } from './key-entity';
import { identityKeys } from './keys';
import type { IdentityKeys } from './keys';

/** Outcome of the atomic create script (see lua/create-key-3.lua). */
export type CreateOutcome = 'created' | 'exists' | 'conflict' | 'late' | 'limit';
export type SetRevokedOutcome = 'missing' | 'unchanged' | 'changed';

/** A script answered something its reply table does not know: a script/code mismatch, never bad input. */
export class UnknownScriptReplyError extends Error {
  constructor(
    readonly script: string,
    readonly reply: unknown,
  ) {
    super(`unknown reply from Lua script ${script}: ${JSON.stringify(reply)}`);
    this.name = 'UnknownScriptReplyError';
  }
}

/**
 * The replies of the identity key scripts, one table per script: every reply a script can give
 * maps to its outcome here; anything else is an {@link UnknownScriptReplyError} naming the script.
 */
export const KEY_SCRIPT_REPLIES = {
  'create-key-3.lua': { created: 'created', exists: 'exists', conflict: 'conflict', late: 'late', limit: 'limit' },
  'set-revoked-1.lua': { 0: 'missing', 1: 'unchanged', 2: 'changed' },
  'delete-key-3.lua': { 0: false, 1: true },
} as const satisfies {
  'create-key-3.lua': Record<string, CreateOutcome>;
  'set-revoked-1.lua': Record<number, SetRevokedOutcome>;
  'delete-key-3.lua': Record<number, boolean>;
};
type KeyScript = keyof typeof KEY_SCRIPT_REPLIES;

/** Maps a script reply through its table; throws {@link UnknownScriptReplyError} on anything else. */
export function keyScriptReply<S extends KeyScript>(
  script: S,
  reply: unknown,
): (typeof KEY_SCRIPT_REPLIES)[S][keyof (typeof KEY_SCRIPT_REPLIES)[S]] {
  const table = KEY_SCRIPT_REPLIES[script] as Readonly<Record<string, unknown>>;
  const key = typeof reply === 'string' || typeof reply === 'number' ? String(reply) : undefined;
  if (key === undefined || !Object.hasOwn(table, key)) throw new UnknownScriptReplyError(script, reply);
  return table[key] as (typeof KEY_SCRIPT_REPLIES)[S][keyof (typeof KEY_SCRIPT_REPLIES)[S]];
}

interface LuaCommands {
  createKey(k1: string, k2: string, k3: string, ...argv: (string | number)[]): Promise<unknown>;
  setRevoked(k1: string, ...argv: string[]): Promise<unknown>;
  deleteKey(k1: string, k2: string, k3: string, ...argv: string[]): Promise<unknown>;
}

const LUA_DIR = path.join(__dirname, 'lua');

/**
 * Atomic writes of API keys (Lua over ioredis). Used by the key worker, the API (revoke, delete)
 * and the admin functions (bootstrap, legacy import).
 */
export class KeyWriter {
  readonly keys: IdentityKeys;
  private readonly lua: LuaCommands;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    loadLuaCommands(redis, LUA_DIR);
    this.lua = redis as unknown as LuaCommands;
    this.keys = identityKeys(prefix);
  }

  /**
   * Creates `record` unless the tenant already holds `limit` keys (0 = no limit) or Redis TIME
   * is past `deadlineMs` (0 = none). Idempotent by id.
   */
  async create(
    record: ApiKeyRecord,
    opts: { limit: number; deadlineMs: number },
  ): Promise<{ outcome: CreateOutcome; id: string }> {
    const reply = await this.lua.createKey(
      this.keys.keyEntity(record.id),
      this.keys.keyByHash,
      this.keys.tenantKeys(record.tenant),
      record.id,
      record.keyHash,
      opts.deadlineMs,
      opts.limit,
      Date.parse(record.createdAt),
      ...toHashFields(record),
    );
    if (!Array.isArray(reply) || reply.length !== 2 || typeof reply[1] !== 'string')
      throw new UnknownScriptReplyError('create-key-3.lua', reply);
    return { outcome: keyScriptReply('create-key-3.lua', reply[0]), id: reply[1] };
  }

  /** 'missing' when no such key in that tenant; publishes an invalidation when it changed. */
  async setRevoked(tenant: string, id: string, revoked: boolean, nowIso: string): Promise<SetRevokedOutcome> {
    const reply = await this.lua.setRevoked(
      this.keys.keyEntity(id),
      tenant,
      revoked ? '1' : '0',
      nowIso,
      this.keys.invalidationChannel,
      id,
    );
    return keyScriptReply('set-revoked-1.lua', reply);
  }

  /** True when deleted; publishes an invalidation. */
  async delete(tenant: string, id: string): Promise<boolean> {
    const reply = await this.lua.deleteKey(
      this.keys.keyEntity(id),
      this.keys.keyByHash,
      this.keys.tenantKeys(tenant),
      tenant,
      id,
      this.keys.invalidationChannel,
    );
    return keyScriptReply('delete-key-3.lua', reply);
  }

  async idByHash(keyHash: string): Promise<string | null> {
    return this.redis.hget(this.keys.keyByHash, keyHash);
  }

  async count(tenant: string): Promise<number> {
    return this.redis.zcard(this.keys.tenantKeys(tenant));
  }

  /** Redis server time in ms (the clock the create deadline is measured against). */
  async redisTimeMs(): Promise<number> {
    const [s, us] = await this.redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  }
}

/**
 * Reads of API keys: entities through a redis-om Repository (HASH, no RediSearch: never
 * createIndex/search), our own ZSET/HASH indexes through ioredis.
 */
export class KeyReader {
  readonly keys: IdentityKeys;
  private readonly repo: Repository<KeyEntity>;

  constructor(
    private readonly redis: RedisClient,
    om: RedisConnection,
    prefix: string,
  ) {
    this.keys = identityKeys(prefix);
    this.repo = new Repository(keySchema(this.keys.keyEntityPrefix), om);
  }

  async fetch(id: string): Promise<ApiKeyRecord | null> {
    return fromEntity(await this.repo.fetch(id));
  }

  /** One pipelined batch (node-redis pipelines commands issued in the same tick). */
  async fetchMany(ids: readonly string[]): Promise<ApiKeyRecord[]> {
    if (ids.length === 0) return [];
    const entities = await this.repo.fetch([...ids]);
    return entities.map(fromEntity).filter((r): r is ApiKeyRecord => r !== null);
  }

  async idByHash(keyHash: string): Promise<string | null> {
    return this.redis.hget(this.keys.keyByHash, keyHash);
  }

  /** A tenant's keys, newest first: one round trip for the ids, one batch for the entities. */
  async listTenant(tenant: string): Promise<ApiKeyRecord[]> {
    const ids = await this.redis.zrange(this.keys.tenantKeys(tenant), 0, -1);
    const records = await this.fetchMany(ids);
    return records.sort(newestFirst);
  }

  async count(tenant: string): Promise<number> {
    return this.redis.zcard(this.keys.tenantKeys(tenant));
  }
}
