import { randomUUID } from 'node:crypto';
import { Repository } from 'redis-om';
import type { RedisConnection } from 'redis-om';
import { keyRecord } from '@proofline/identity-domain';
import type { ApiKeyRecord, KeyRecordInput } from '@proofline/identity-domain';
import { eventually, testRedis, testRedisClient, testRedisDeployment, uniquePrefix } from '@proofline/shared-testing';
import { keySchema } from './key-entity';
import { KeyReader, KeyWriter, UnknownScriptReplyError, keyScriptReply } from './key-store';
import { identityKeys } from './keys';
import { closeOmConnection, openOmConnection } from './om-connection';

const record = ({
  keyHash,
  ...over
}: Partial<Omit<KeyRecordInput, 'secret'>> & { keyHash?: string } = {}): ApiKeyRecord =>
  keyRecord({
    id: randomUUID(),
    tenant: 't1',
    name: 'a key',
    permissions: ['Issuer_Admin', 'Verifier_User'],
    createdBy: 'creator',
    createdAt: '2026-11-22T10:00:00.123Z',
    expiresAt: '2027-01-21T10:00:00.123Z',
    ...over,
    secret: { keyHash: keyHash ?? randomUUID().replace(/-/g, '').padEnd(64, '0'), last4: 'AbC9' },
  });

describe('key store (Lua writes, redis-om reads)', () => {
  const prefix = uniquePrefix('idstore');
  const { redis, cleanup } = testRedis(prefix);
  const keys = identityKeys(prefix);
  let om: RedisConnection;
  let writer: KeyWriter;
  let reader: KeyReader;

  beforeAll(async () => {
    om = await openOmConnection(testRedisDeployment(), () => undefined);
    writer = new KeyWriter(redis, prefix);
    reader = new KeyReader(redis, om, prefix);
  });
  afterAll(async () => {
    await closeOmConnection(om);
    await cleanup();
  });

  it('round-trips: a Lua-written key reads back through redis-om exactly, and a redis-om save reads the same', async () => {
    const r = record({ revokedAt: '2026-11-22T11:00:00.000Z', origin: 'legacy', legacyId: '77' });
    expect(await writer.create(r, { limit: 0, deadlineMs: 0 })).toEqual({ outcome: 'created', id: r.id });
    expect(await reader.fetch(r.id)).toEqual(r);
    expect(await redis.hget(keys.keyEntity(r.id), 'permissions')).toBe('Issuer_Admin|Verifier_User');

    // The same layout written by redis-om itself is what the Lua scripts and the reader expect.
    const repo = new Repository(keySchema(keys.keyEntityPrefix), om);
    const viaOm = record();
    await repo.save(viaOm.id, {
      ...viaOm,
      revokedAt: undefined,
      legacyId: undefined,
      permissions: [...viaOm.permissions],
    });
    expect(await redis.hgetall(keys.keyEntity(viaOm.id))).toEqual(
      Object.fromEntries(
        Object.entries({ ...viaOm, permissions: 'Issuer_Admin|Verifier_User' }).filter(([, v]) => v !== null),
      ),
    );
    expect(await reader.fetch(viaOm.id)).toEqual(viaOm);
    expect(await reader.fetch(randomUUID())).toBeNull();
  });

  it('creates idempotently by id, refuses a taken hash, the limit and a passed deadline', async () => {
    const t = `lim-${randomUUID().slice(0, 8)}`;
    const a = record({ tenant: t });
    expect((await writer.create(a, { limit: 2, deadlineMs: 0 })).outcome).toBe('created');
    expect((await writer.create(a, { limit: 2, deadlineMs: 0 })).outcome).toBe('exists');
    expect(await writer.create(record({ tenant: t, keyHash: a.keyHash }), { limit: 2, deadlineMs: 0 })).toEqual({
      outcome: 'conflict',
      id: a.id,
    });
    const past = (await writer.redisTimeMs()) - 1;
    expect((await writer.create(record({ tenant: t }), { limit: 2, deadlineMs: past })).outcome).toBe('late');
    expect((await writer.create(record({ tenant: t }), { limit: 2, deadlineMs: past + 60_000 })).outcome).toBe(
      'created',
    );
    expect((await writer.create(record({ tenant: t }), { limit: 2, deadlineMs: 0 })).outcome).toBe('limit');
    expect(await redis.zcard(keys.tenantKeys(t))).toBe(2);
  });

  it('lists newest first (createdAt desc, then id) with one batch', async () => {
    const t = `list-${randomUUID().slice(0, 8)}`;
    const older = record({ tenant: t, createdAt: '2026-01-01T00:00:00.000Z' });
    const tieA = record({
      tenant: t,
      id: '00000000-0000-4000-8000-000000000001',
      createdAt: '2026-02-01T00:00:00.000Z',
    });
    const tieB = record({
      tenant: t,
      id: '00000000-0000-4000-8000-000000000002',
      createdAt: '2026-02-01T00:00:00.000Z',
    });
    for (const r of [tieB, older, tieA]) await writer.create(r, { limit: 0, deadlineMs: 0 });
    expect((await reader.listTenant(t)).map((r) => r.id)).toEqual([tieA.id, tieB.id, older.id]);
  });

  it('revokes idempotently, deletes with indexes, scoped to the tenant, and publishes invalidations', async () => {
    const sub = testRedisClient();
    const messages: string[] = [];
    sub.on('message', (_c: string, m: string) => messages.push(m));
    await sub.subscribe(keys.invalidationChannel);
    const r = record({ tenant: 'rev' });
    await writer.create(r, { limit: 0, deadlineMs: 0 });

    expect(await writer.setRevoked('other', r.id, true, '2026-11-23T00:00:00.000Z')).toBe('missing');
    expect(await writer.setRevoked('rev', r.id, true, '2026-11-23T00:00:00.000Z')).toBe('changed');
    expect(await writer.setRevoked('rev', r.id, true, '2026-11-24T00:00:00.000Z')).toBe('unchanged');
    expect(await reader.fetch(r.id)).toMatchObject({
      revokedAt: '2026-11-23T00:00:00.000Z',
      updatedAt: '2026-11-23T00:00:00.000Z',
    });
    expect(await writer.setRevoked('rev', r.id, false, '2026-11-25T00:00:00.000Z')).toBe('changed');
    expect(await reader.fetch(r.id)).toMatchObject({ revokedAt: null, updatedAt: '2026-11-25T00:00:00.000Z' });

    expect(await writer.delete('other', r.id)).toBe(false);
    expect(await writer.delete('rev', r.id)).toBe(true);
    expect(await redis.exists(keys.keyEntity(r.id))).toBe(0);
    expect(await redis.hget(keys.keyByHash, r.keyHash)).toBeNull();
    expect(await redis.zscore(keys.tenantKeys('rev'), r.id)).toBeNull();
    await eventually(async () => messages.length >= 3);
    expect(messages).toEqual([r.id, r.id, r.id]);
    await sub.quit();
  });

  it('maps every script reply through its table; an unknown reply is an error naming the script', () => {
    expect(keyScriptReply('create-key-3.lua', 'limit')).toBe('limit');
    expect(keyScriptReply('set-revoked-1.lua', 2)).toBe('changed');
    expect(keyScriptReply('delete-key-3.lua', 0)).toBe(false);
    expect(() => keyScriptReply('set-revoked-1.lua', 3)).toThrow(UnknownScriptReplyError);
    expect(() => keyScriptReply('create-key-3.lua', 'EXISTS')).toThrow(
      'unknown reply from Lua script create-key-3.lua: "EXISTS"',
    );
    expect(() => keyScriptReply('delete-key-3.lua', null)).toThrow(
      expect.objectContaining({ script: 'delete-key-3.lua', reply: null }),
    );
    expect(() => keyScriptReply('create-key-3.lua', 'toString')).toThrow(UnknownScriptReplyError);
  });
});
