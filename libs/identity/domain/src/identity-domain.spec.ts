import {
  IDENTITY_KEY_PATTERN,
  createKeyBody,
  generateRawKey,
  hashKey,
  keyMask,
  legacyImportFile,
  legacyKeyUuid,
  outranks,
  rankOn,
  sameHash,
  uuidV5,
} from './index';

describe('permissions and escalation', () => {
  it('ranks per side, a missing side is 0', () => {
    expect(rankOn(['Issuer_User', 'Verifier_Auditor'], 'issuer')).toBe(2);
    expect(rankOn(['Issuer_User', 'Verifier_Auditor'], 'verifier')).toBe(1);
    expect(rankOn(['Issuer_Admin'], 'verifier')).toBe(0);
  });
  it.each([
    [['Issuer_User'], ['Issuer_Admin'], false],
    [['Issuer_Admin'], ['Issuer_Admin'], false],
    [['Issuer_Admin'], ['Issuer_User'], true],
    [['Verifier_Auditor'], ['Issuer_Admin'], true],
    [['Issuer_Auditor', 'Verifier_User'], ['Issuer_User', 'Verifier_User'], false],
    [['Issuer_Auditor', 'Verifier_Admin'], ['Issuer_Admin', 'Verifier_User'], true],
  ] as const)('%j outranks %j: %s', (target, holder, expected) => {
    expect(outranks(target, holder)).toBe(expected);
  });
});

describe('key material', () => {
  it('generates idty_ + 32 alphanumerics, all different, every symbol reachable', () => {
    const keys = Array.from({ length: 2000 }, generateRawKey);
    for (const k of keys) expect(k).toMatch(IDENTITY_KEY_PATTERN);
    expect(new Set(keys).size).toBe(keys.length);
    const seen = new Set(keys.join('').replace(/idty_/g, ''));
    expect(seen.size).toBe(62);
  });
  it('hashes with sha256 hex and compares in constant time', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sameHash(hashKey('a'), hashKey('a'))).toBe(true);
    expect(sameHash(hashKey('a'), hashKey('b'))).toBe(false);
    expect(sameHash('ab', 'abc')).toBe(false);
  });
  it('masks as idty_ + 28 * + last 4', () => {
    expect(keyMask('WXYZ')).toBe(`idty_${'*'.repeat(28)}WXYZ`);
    expect(keyMask('')).toBe(`idty_${'*'.repeat(32)}`);
  });
});

describe('ids', () => {
  it('uuidV5 matches the RFC 4122 / Python uuid5 vector', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });
  it('legacy ids map to a stable v5 UUID', () => {
    expect(legacyKeyUuid(42)).toBe(legacyKeyUuid('42'));
    expect(legacyKeyUuid(42)).not.toBe(legacyKeyUuid(43));
    expect(legacyKeyUuid(42)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('create body schema', () => {
  const issues = (v: unknown) => {
    const r = createKeyBody.safeParse(v);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };
  it('accepts one or both sides and trims the name', () => {
    expect(createKeyBody.parse({ name: '  abc ', verifierPermission: 'Verifier_User' })).toEqual({
      name: 'abc',
      verifierPermission: 'Verifier_User',
    });
  });
  it('explains each refusal', () => {
    expect(issues({ name: 'abc' })).toEqual([': at least one of issuerPermission and verifierPermission is required']);
    expect(issues({ name: 'ab', issuerPermission: 'Issuer_User' })[0]).toContain('name: must be 3 to 32 characters');
    expect(issues({ name: 'a'.repeat(33), issuerPermission: 'Issuer_User' })[0]).toContain('3 to 32');
    expect(issues({ name: 'abc', issuerPermission: 'issuer_user' })[0]).toBe(
      'issuerPermission: must be one of Issuer_Admin, Issuer_User, Issuer_Auditor (case-sensitive)',
    );
    expect(issues({ name: 'abc', issuerPermission: 'Verifier_User' })[0]).toContain('must be one of Issuer_Admin');
    expect(issues({ name: 'abc', issuerPermissions: 'Issuer_User' }).join()).toContain(
      'unknown field "issuerPermissions" (allowed fields: name, issuerPermission, verifierPermission)',
    );
    expect(issues([1])[0]).toContain('must be a JSON object');
    expect(issues(undefined)[0]).toContain('JSON object body is required');
  });
});

describe('legacy import schema', () => {
  it('needs exactly one of rawKey and keyHash', () => {
    const base = { id: 1, name: 'old key', status: 'Active', createdAt: '2025-01-01T00:00:00Z' };
    expect(legacyImportFile.safeParse([{ ...base, rawKey: 'legacy-raw-key-0001' }]).success).toBe(true);
    expect(legacyImportFile.safeParse([base]).success).toBe(false);
    expect(
      legacyImportFile.safeParse([{ ...base, rawKey: 'legacy-raw-key-0001', keyHash: 'a'.repeat(64) }]).success,
    ).toBe(false);
    expect(legacyImportFile.safeParse([{ ...base, id: 'x', rawKey: 'legacy-raw-key-0001' }]).success).toBe(false);
  });
});
