import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.port).toBe(3000);
    expect(c.graphqlPort).toBe(4000);
    expect(c.blockIntervalMs).toBe(10000);
    expect(c.maxLinks).toBe(1000);
    expect(c.keyLimit).toBe(5);
    expect(c.keyLifetimeDays).toBe(60);
    expect(c.legacySunset.toISOString()).toBe('2026-10-01T00:00:00.000Z');
    expect(c.features).toEqual({ linked: true, verify: true, navigate: true, unencoded: true });
    expect(c.encoders).toEqual(['SHA256', 'Base64']);
    expect(c.maxRecordBytes).toBe(1048576);
    expect(c.maxPendingPublications).toBe(100000);
    expect(c.auth.claimsField).toBe('cognito:groups');
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.features)).toBe(true);
  });

  it('parses lists case-insensitively and drops duplicates', () => {
    const c = loadConfig({ FEATURES: 'linked, VERIFY,linked', ENCODERS: 'sha256' });
    expect(c.features).toEqual({ linked: true, verify: true, navigate: false, unencoded: false });
    expect(c.encoders).toEqual(['SHA256']);
  });

  it.each([
    [{ PORT: 'abc' }, /^PORT: .*\(got "abc"\)$/],
    [{ KEY_LIMIT: '0' }, /^KEY_LIMIT: /],
    [{ FEATURES: 'linked,teleport' }, /^FEATURES: unknown feature "teleport"/],
    [{ ENCODERS: 'MD5' }, /^ENCODERS: unknown encoder "MD5"/],
    [{ LEGACY_SUNSET: 'tomorrow' }, /^LEGACY_SUNSET: /],
    [{ BOOTSTRAP_API_KEY: 'idty_short' }, /^BOOTSTRAP_API_KEY: must be idty_/],
    [{ AUTH_JWT_SECRET: 'short' }, /^AUTH_JWT_SECRET: must be at least 32/],
    [{ REDIS_URL: 'nope' }, /^REDIS_URL: /],
  ])('rejects %j with a one-line message naming the variable', (env, pattern) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(pattern);
    expect(message).not.toContain('\n');
  });
});
