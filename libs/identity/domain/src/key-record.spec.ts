import { randomUUID } from 'node:crypto';
import { createKeyJob, hashKey, issueKey, keyMask, keyRecord, toIdentityApiKey } from './index';

describe('keyRecord / issueKey (the one constructor of a stored key)', () => {
  const base = {
    id: '00000000-0000-4000-8000-000000000001',
    tenant: 'acme',
    name: 'a key',
    permissions: ['Verifier_User', 'Issuer_Admin', 'Issuer_Admin'] as const,
    createdBy: 'creator',
    createdAt: new Date('2026-11-22T10:00:00.123Z'),
    expiresAt: new Date('2027-01-21T10:00:00.123Z'),
  };

  it('hashes and masks a raw key, never keeps it, orders permissions, defaults a new key', () => {
    const rawKey = `idty_${'a'.repeat(28)}WXYZ`;
    const r = keyRecord({ ...base, secret: { rawKey } });
    expect(r).toEqual({
      id: base.id,
      tenant: 'acme',
      name: 'a key',
      keyHash: hashKey(rawKey),
      last4: 'WXYZ',
      permissions: ['Issuer_Admin', 'Verifier_User'],
      createdBy: 'creator',
      createdAt: '2026-11-22T10:00:00.123Z',
      updatedAt: '2026-11-22T10:00:00.123Z',
      expiresAt: '2027-01-21T10:00:00.123Z',
      revokedAt: null,
      source: 'identity',
      legacyId: null,
    });
    expect(JSON.stringify(r)).not.toContain(rawKey);
    expect(toIdentityApiKey(r).keyMask).toBe(keyMask('WXYZ'));
  });

  it('keeps a stored hash, ISO strings as given, and the legacy fields', () => {
    const r = keyRecord({
      ...base,
      createdAt: '2020-01-01T00:00:00Z',
      updatedAt: new Date('2026-01-01T00:00:00.000Z'),
      revokedAt: new Date('2026-01-01T00:00:00.000Z'),
      origin: 'legacy',
      legacyId: '42',
      secret: { keyHash: 'f'.repeat(64), last4: '' },
    });
    expect(r).toMatchObject({
      keyHash: 'f'.repeat(64),
      last4: '',
      createdAt: '2020-01-01T00:00:00Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      revokedAt: '2026-01-01T00:00:00.000Z',
      source: 'legacy',
      legacyId: '42',
    });
  });

  it('issueKey makes a fresh raw key each time and the record of its hash', () => {
    const a = issueKey(base);
    const b = issueKey(base);
    expect(a.rawKey).toMatch(/^idty_[A-Za-z0-9]{32}$/);
    expect(a.rawKey).not.toBe(b.rawKey);
    expect(a.record.keyHash).toBe(hashKey(a.rawKey));
    expect(a.record.last4).toBe(a.rawKey.slice(-4));
  });
});

describe('the create-key job contract (identity types, not re-typed strings)', () => {
  const job = {
    id: randomUUID(),
    tenant: 'acme',
    keyHash: 'a'.repeat(64),
    last4: 'WXYZ',
    name: 'k',
    permissions: ['Issuer_User'],
    createdBy: 'creator',
    createdAt: '2026-11-22T10:00:00.123Z',
    expiresAt: '2027-01-21T10:00:00.123Z',
    deadlineMs: 1,
  };

  it('accepts a well-formed job and refuses an unknown permission, a bad tenant, a raw key field', () => {
    expect(createKeyJob.parse(job).permissions).toEqual(['Issuer_User']);
    expect(createKeyJob.safeParse({ ...job, permissions: ['issuer_user'] }).success).toBe(false);
    expect(createKeyJob.safeParse({ ...job, permissions: ['Issuer_User', 'Root'] }).success).toBe(false);
    expect(createKeyJob.safeParse({ ...job, tenant: 'a:b' }).success).toBe(false);
    expect(createKeyJob.safeParse({ ...job, rawKey: 'idty_x' }).success).toBe(false);
  });
});
