import { CONFIG_VARIABLES, ConfigError, DEVNET_WALLET_SEED, configSchema, loadConfig } from './config';

/** The devnet node's strictness and realities as configured by default (ARC's strict code, no realities). */
const DEFAULT_NODE = {
  strict: true,
  standardFormatSupported: true,
  rejectCallbackContaining: [],
  timeToSeenMs: 0,
  statusBeforeSeen: 'ACCEPTED_BY_NETWORK',
  submitDelayMs: 0,
  doubleSpendMarksBoth: false,
};

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
    expect(c.chain).toEqual({
      network: 'devnet',
      arcUrl: 'http://127.0.0.1:9090',
      arcApiKey: undefined,
      arcCallbackUrl: undefined,
      arcCallbackToken: undefined,
      arcWaitFor: 'STORED',
      arcTimeoutMs: 15000,
      arcMaxInFlight: 4,
      headersUrl: 'http://127.0.0.1:9090',
      headersApiKey: undefined,
      headersMaxRps: undefined,
      pollMs: 2000,
      callbackGraceMs: 30_000,
    });
    expect(c.devnet).toEqual({ port: 9090, apiKey: undefined, redisUrl: 'redis://127.0.0.1:6379', ...DEFAULT_NODE });
  });

  it('reads the devnet node settings and refuses a bad DEVNET_PORT', () => {
    expect(loadConfig({ DEVNET_PORT: '9191', DEVNET_API_KEY: 'devnet-key' }).devnet).toEqual({
      port: 9191,
      apiKey: 'devnet-key',
      redisUrl: 'redis://127.0.0.1:6379',
      ...DEFAULT_NODE,
    });
    expect(
      loadConfig({
        DEVNET_STRICT: 'false',
        DEVNET_STANDARD_FORMAT: 'false',
        DEVNET_REJECT_CALLBACK_CONTAINING: 'http://localhost, https://localhost',
        DEVNET_TIME_TO_SEEN_MS: '1500',
        DEVNET_STATUS_BEFORE_SEEN: 'STORED',
        DEVNET_SUBMIT_DELAY_MS: '1000',
        DEVNET_DOUBLE_SPEND_MARKS_BOTH: 'yes',
      }).devnet,
    ).toMatchObject({
      strict: false,
      standardFormatSupported: false,
      rejectCallbackContaining: ['http://localhost', 'https://localhost'],
      timeToSeenMs: 1500,
      statusBeforeSeen: 'STORED',
      submitDelayMs: 1000,
      doubleSpendMarksBoth: true,
    });
    expect(loadConfig({ DEVNET_STATUS_BEFORE_SEEN: 'stored' }).devnet.statusBeforeSeen).toBe('STORED');
    expect(() => loadConfig({ DEVNET_STATUS_BEFORE_SEEN: 'not a status' })).toThrow(/^DEVNET_STATUS_BEFORE_SEEN: /);
    expect(() => loadConfig({ DEVNET_SUBMIT_DELAY_MS: '-1' })).toThrow(/^DEVNET_SUBMIT_DELAY_MS: /);
    expect(
      loadConfig({ REDIS_URL: 'redis://10.0.0.1:6379', DEVNET_REDIS_URL: 'redis://127.0.0.1:7000' }).devnet.redisUrl,
    ).toBe('redis://127.0.0.1:7000');
    expect(() => loadConfig({ DEVNET_REDIS_URL: 'not a url' })).toThrow(/^DEVNET_REDIS_URL: /);
    expect(() => loadConfig({ DEVNET_PORT: 'abc' })).toThrow(/^DEVNET_PORT: /);
    expect(() => loadConfig({ DEVNET_PORT: '70000' })).toThrow(/^DEVNET_PORT: /);
  });

  it('reads a Redis Cluster by its nodes and NAT map, and refuses malformed ones naming the variable', () => {
    expect(loadConfig({}).redisCluster).toEqual({ nodes: undefined, natMap: undefined });
    const c = loadConfig({
      REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-2:7001,[::1]:7002 ',
      REDIS_CLUSTER_NAT_MAP: '10.0.0.1:7000=127.0.0.1:17000, redis-2:7001=localhost:17001',
    });
    expect(c.redisCluster.nodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-2', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    expect(c.redisCluster.natMap).toEqual({
      '10.0.0.1:7000': { host: '127.0.0.1', port: 17000 },
      'redis-2:7001': { host: 'localhost', port: 17001 },
    });
    expect(loadConfig({ REDIS_CLUSTER_NODES: ' ' }).redisCluster.nodes).toBeUndefined();
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1' })).toThrow(
      /^REDIS_CLUSTER_NODES: "10.0.0.1" is not host:port/,
    );
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:70000' })).toThrow(/^REDIS_CLUSTER_NODES: /);
    expect(() => loadConfig({ REDIS_CLUSTER_NAT_MAP: 'a:1' })).toThrow(
      /^REDIS_CLUSTER_NAT_MAP: "a:1" is not announced-host:port=reachable-host:port/,
    );
    expect(() => loadConfig({ REDIS_CLUSTER_NAT_MAP: 'a:1=b' })).toThrow(
      /^REDIS_CLUSTER_NAT_MAP: "b" is not host:port/,
    );
  });

  it('reads the ARC settings', () => {
    const c = loadConfig({
      NETWORK: 'testnet',
      WALLET_SEED: 'ab'.repeat(32),
      ARC_URL: 'https://arc-test.taal.com',
      ARC_API_KEY: 'mainnet_abc',
      ARC_CALLBACK_URL: 'https://proofline.example/arc/callback',
      ARC_CALLBACK_TOKEN: '0123456789abcdef',
      ARC_TIMEOUT_MS: '20000',
      ARC_MAX_IN_FLIGHT: '8',
      ARC_CALLBACK_GRACE_MS: '45000',
      HEADERS_URL: 'https://api.whatsonchain.com/v1/bsv/test',
      HEADERS_API_KEY: 'mainnet_woc',
      HEADERS_MAX_RPS: '2.5',
    });
    expect(c.chain).toEqual({
      network: 'testnet',
      arcUrl: 'https://arc-test.taal.com',
      arcApiKey: 'mainnet_abc',
      arcCallbackUrl: 'https://proofline.example/arc/callback',
      arcCallbackToken: '0123456789abcdef',
      arcWaitFor: 'STORED',
      arcTimeoutMs: 20000,
      arcMaxInFlight: 8,
      headersUrl: 'https://api.whatsonchain.com/v1/bsv/test',
      headersApiKey: 'mainnet_woc',
      headersMaxRps: 2.5,
      pollMs: 2000,
      callbackGraceMs: 45000,
    });
    expect(loadConfig({}).chain.callbackGraceMs).toBe(30_000);
    expect(loadConfig({ HEADERS_MAX_RPS: ' ' }).chain.headersMaxRps).toBeUndefined();
    expect(() => loadConfig({ HEADERS_MAX_RPS: '0' })).toThrow(/^HEADERS_MAX_RPS: /);
    expect(() => loadConfig({ HEADERS_MAX_RPS: 'fast' })).toThrow(/^HEADERS_MAX_RPS: /);
    expect(() => loadConfig({ ARC_MAX_IN_FLIGHT: '0' })).toThrow(/^ARC_MAX_IN_FLIGHT: /);
  });

  it('refuses production without AUTH_JWT_SECRET or AUTH_JWKS_URL, in one line naming the variable', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      new ConfigError('AUTH_JWT_SECRET: required when NODE_ENV=production (32+ characters), or set AUTH_JWKS_URL'),
    );
    expect(() => loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: '  ' })).toThrow(/^AUTH_JWT_SECRET: required/);
    expect(loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(32) }).auth.jwtSecret).toBe('x'.repeat(32));
    expect(loadConfig({ NODE_ENV: 'production', AUTH_JWKS_URL: 'https://idp.example/jwks.json' }).auth.jwksUrl).toBe(
      'https://idp.example/jwks.json',
    );
    // Development and test keep the generated development secret.
    expect(loadConfig({ NODE_ENV: 'development' }).auth.jwtSecret).toBeUndefined();
    expect(loadConfig({}).nodeEnv).toBe('development');
  });

  it('wallet: the devnet seed by default, a 64-hex WALLET_SEED required outside the devnet', () => {
    const dev = loadConfig({});
    expect(dev.network).toBe('devnet');
    expect(dev.wallet).toEqual({
      seed: DEVNET_WALLET_SEED,
      utxoSatoshis: 1000,
      lowWater: 2000,
      target: 10000,
      feeFloorSatsPerKb: 1,
      feePolicyMaxAgeMs: 3_600_000,
    });
    expect(() => loadConfig({ NETWORK: 'testnet' })).toThrow(/^WALLET_SEED: required when NETWORK is testnet/);
    expect(() => loadConfig({ NETWORK: 'mainnet', WALLET_SEED: DEVNET_WALLET_SEED })).toThrow(
      /^WALLET_SEED: must be 64 hex characters/,
    );
    expect(() => loadConfig({ WALLET_SEED: 'abc' })).toThrow(/^WALLET_SEED: must be 64 hex/);
    expect(() => loadConfig({ NETWORK: 'regtest' })).toThrow(/^NETWORK: /);
    expect(() => loadConfig({ POOL_LOW_WATER: '50', POOL_TARGET: '10' })).toThrow(
      /^POOL_TARGET: must be at least POOL_LOW_WATER/,
    );
    const seed = 'AB'.repeat(32);
    const main = loadConfig({
      NETWORK: 'mainnet',
      WALLET_SEED: seed,
      POOL_UTXO_SATS: '500',
      POOL_LOW_WATER: '10',
      POOL_TARGET: '20',
      FEE_FLOOR_SATS_PER_KB: '50',
    });
    expect(main.wallet).toEqual({
      seed: seed.toLowerCase(),
      utxoSatoshis: 500,
      lowWater: 10,
      target: 20,
      feeFloorSatsPerKb: 50,
      feePolicyMaxAgeMs: 3_600_000,
    });
  });

  it('rate limits (off by default; RATE or RATE/BURST) and the queue dashboard switch', () => {
    const d = loadConfig({});
    expect(d.rateLimit).toEqual({ perKey: undefined, perTenant: undefined });
    expect(d.adminUi).toBe(true);
    const c = loadConfig({ RATE_LIMIT_PER_KEY: '100', RATE_LIMIT_PER_TENANT: ' 50 / 200 ', ADMIN_UI: 'false' });
    expect(c.rateLimit).toEqual({ perKey: { perSecond: 100, burst: 100 }, perTenant: { perSecond: 50, burst: 200 } });
    expect(c.adminUi).toBe(false);
    expect(loadConfig({ RATE_LIMIT_PER_KEY: '' }).rateLimit.perKey).toBeUndefined();
  });

  it('webhooks: private targets refused, a generated seal key and 10 webhooks per tenant by default', () => {
    expect(loadConfig({}).webhooks).toEqual({ allowPrivate: false, secretKey: undefined, limit: 10 });
    expect(
      loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_SECRET_KEY: 'AB'.repeat(32), WEBHOOK_LIMIT: '3' }).webhooks,
    ).toEqual({ allowPrivate: true, secretKey: 'ab'.repeat(32), limit: 3 });
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'yes' })).toThrow(/^WEBHOOK_ALLOW_PRIVATE: must be true or false/);
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY: 'short' })).toThrow(/^WEBHOOK_SECRET_KEY: must be 64 hex/);
  });

  it('parses lists case-insensitively and drops duplicates', () => {
    const c = loadConfig({ FEATURES: 'linked, VERIFY,linked', ENCODERS: 'sha256' });
    expect(c.features).toEqual({ linked: true, verify: true, navigate: false, unencoded: false });
    expect(c.encoders).toEqual(['SHA256']);
  });

  it('edge settings: CORS off, metrics on the public ports, a 100 KiB GraphQL body limit by default', () => {
    const c = loadConfig({});
    expect(c.corsOrigins).toEqual([]);
    expect(c.metrics).toEqual({ host: '0.0.0.0', apiPort: undefined, graphqlPort: undefined });
    expect(c.graphqlMaxBodyBytes).toBe(102400);
    const set = loadConfig({
      CORS_ORIGINS: 'https://a.example, http://localhost:5173,https://a.example',
      METRICS_PORT: '9464',
      GRAPHQL_METRICS_PORT: '9465',
      METRICS_HOST: '127.0.0.1',
      HOST: '0.0.0.0',
    });
    expect(set.corsOrigins).toEqual(['https://a.example', 'http://localhost:5173']);
    expect(set.metrics).toEqual({ host: '127.0.0.1', apiPort: 9464, graphqlPort: 9465 });
    expect(loadConfig({ METRICS_PORT: '' }).metrics.apiPort).toBeUndefined();
  });

  it('applies the defaults of the process, Redis, worker and identity settings', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      nodeEnv: 'development',
      logLevel: 'info',
      redisPrefix: 'proofline',
      host: '0.0.0.0',
      workers: 1,
      workerConcurrency: 16,
      apiProcesses: 2,
      redisCommandTimeoutMs: 1000,
      publishCoalesceMs: 50,
      bootstrapApiKey: undefined,
      keyCreateTimeoutMs: 10_000,
      shutdownGraceMs: 10_000,
      network: 'devnet',
    });
    expect(c.auth).toEqual({
      jwtSecret: undefined,
      jwksUrl: undefined,
      issuer: undefined,
      audience: undefined,
      claimsField: 'cognito:groups',
    });
    expect(c.metrics.workerPort).toBeUndefined();
    expect(loadConfig({ WORKER_METRICS_PORT: '9470', HOST: '10.0.0.2' }).metrics).toEqual({
      host: '10.0.0.2',
      apiPort: undefined,
      graphqlPort: undefined,
      workerPort: 9470,
    });
  });

  it('freezes every nested object and list', () => {
    const c = loadConfig({ CORS_ORIGINS: 'https://a.example', RATE_LIMIT_PER_KEY: '5' });
    for (const part of [
      c.auth,
      c.chain,
      c.metrics,
      c.devnet,
      c.wallet,
      c.webhooks,
      c.rateLimit,
      c.rateLimit.perKey,
      c.corsOrigins,
      c.encoders,
    ])
      expect(Object.isFrozen(part)).toBe(true);
  });

  it('ARC_ORPHAN_MAX_BLOCKS: unset leaves the pass its default, a whole number of blocks otherwise', () => {
    expect(loadConfig({}).chain.orphanMaxBlocks).toBeUndefined();
    expect(loadConfig({ ARC_ORPHAN_MAX_BLOCKS: '12' }).chain.orphanMaxBlocks).toBe(12);
    expect(() => loadConfig({ ARC_ORPHAN_MAX_BLOCKS: '0' })).toThrow(/^ARC_ORPHAN_MAX_BLOCKS: /);
    expect(() => loadConfig({ ARC_ORPHAN_MAX_BLOCKS: '1.5' })).toThrow(/^ARC_ORPHAN_MAX_BLOCKS: /);
  });

  it('declares each variable once, with a doc line, and the schema parses what loadConfig returns', () => {
    const names = CONFIG_VARIABLES.map((v) => v.name);
    expect(names).toHaveLength(75);
    expect(new Set(names).size).toBe(names.length);
    expect(CONFIG_VARIABLES.filter((v) => v.doc.trim() === '')).toEqual([]);
    const env = { PORT: '3100', FEATURES: 'verify', DEVNET_REDIS_URL: 'redis://127.0.0.1:7000' };
    expect(configSchema.parse(env)).toEqual(loadConfig(env));
  });

  it('quotes no value when production lacks a token secret, a blank one included', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: '' })).toThrow(
      new ConfigError('AUTH_JWT_SECRET: required when NODE_ENV=production (32+ characters), or set AUTH_JWKS_URL'),
    );
    // Rules about a value that is set quote it, as a bad value does.
    expect(() => loadConfig({ POOL_LOW_WATER: '50', POOL_TARGET: '10' })).toThrow(
      new ConfigError('POOL_TARGET: must be at least POOL_LOW_WATER (50) (got "10")'),
    );
  });

  it.each([
    [{ NODE_ENV: 'staging' }, /^NODE_ENV: /],
    [{ LOG_LEVEL: 'verbose' }, /^LOG_LEVEL: /],
    [{ REDIS_PREFIX: 'a:b' }, /^REDIS_PREFIX: must be 1-32 characters/],
    [{ REDIS_COMMAND_TIMEOUT_MS: '99' }, /^REDIS_COMMAND_TIMEOUT_MS: /],
    [{ REDIS_PARTITIONS: '0' }, /^REDIS_PARTITIONS: /],
    [{ REDIS_PARTITIONS: '1025' }, /^REDIS_PARTITIONS: /],
    [{ WORKERS: '65' }, /^WORKERS: /],
    [{ WORKER_CONCURRENCY: '0' }, /^WORKER_CONCURRENCY: /],
    [{ API_PROCESSES: '0' }, /^API_PROCESSES: /],
    [{ MAX_PENDING_PUBLICATIONS: '-1' }, /^MAX_PENDING_PUBLICATIONS: /],
    [{ PUBLISH_COALESCE_MS: '1001' }, /^PUBLISH_COALESCE_MS: /],
    [{ MAX_LINKS: '0' }, /^MAX_LINKS: /],
    [{ MAX_RECORD_BYTES: 'big' }, /^MAX_RECORD_BYTES: must be an integer/],
    [{ BLOCK_INTERVAL_MS: '100' }, /^BLOCK_INTERVAL_MS: /],
    [{ KEY_LIFETIME_DAYS: '3651' }, /^KEY_LIFETIME_DAYS: /],
    [{ KEY_CREATE_TIMEOUT_MS: '99' }, /^KEY_CREATE_TIMEOUT_MS: /],
    [{ SHUTDOWN_GRACE_MS: '120001' }, /^SHUTDOWN_GRACE_MS: /],
    [{ AUTH_JWKS_URL: 'idp.example/jwks' }, /^AUTH_JWKS_URL: must be an http\(s\) URL/],
    [{ AUTH_CLAIMS_FIELD: '' }, /^AUTH_CLAIMS_FIELD: /],
    [{ WORKER_METRICS_PORT: '0' }, /^WORKER_METRICS_PORT: /],
    [
      { ARC_CALLBACK_URL: 'me.example/arc', ARC_CALLBACK_TOKEN: '0123456789abcdef' },
      /^ARC_CALLBACK_URL: must be an http/,
    ],
    [{ ARC_POLL_MS: '99' }, /^ARC_POLL_MS: /],
    [{ POOL_UTXO_SATS: '1' }, /^POOL_UTXO_SATS: /],
    [{ FEE_FLOOR_SATS_PER_KB: '-1' }, /^FEE_FLOOR_SATS_PER_KB: /],
    [{ WEBHOOK_ALLOW_PRIVATE: 'TRUE' }, /^WEBHOOK_ALLOW_PRIVATE: must be true or false/],
    [{ WEBHOOK_LIMIT: '0' }, /^WEBHOOK_LIMIT: /],
    [{ CORS_ORIGINS: '*' }, /^CORS_ORIGINS: "\*" is not an origin/],
    [{ CORS_ORIGINS: 'https://a.example/path' }, /^CORS_ORIGINS: /],
    [{ METRICS_PORT: '70000' }, /^METRICS_PORT: /],
    [{ GRAPHQL_MAX_BODY_BYTES: '10' }, /^GRAPHQL_MAX_BODY_BYTES: /],
    [{ PORT: 'abc' }, /^PORT: .*\(got "abc"\)$/],
    [{ KEY_LIMIT: '0' }, /^KEY_LIMIT: /],
    [{ FEATURES: 'linked,teleport' }, /^FEATURES: unknown feature "teleport"/],
    [{ ENCODERS: 'MD5' }, /^ENCODERS: unknown encoder "MD5"/],
    [{ LEGACY_SUNSET: 'tomorrow' }, /^LEGACY_SUNSET: /],
    [{ BOOTSTRAP_API_KEY: 'idty_short' }, /^BOOTSTRAP_API_KEY: must be idty_/],
    [{ AUTH_JWT_SECRET: 'short' }, /^AUTH_JWT_SECRET: must be at least 32/],
    [{ REDIS_URL: 'nope' }, /^REDIS_URL: /],
    [{ NETWORK: 'regtest' }, /^NETWORK: /],
    [{ ARC_URL: 'arc.example' }, /^ARC_URL: must be an http\(s\) URL/],
    [{ HEADERS_URL: 'ftp://x' }, /^HEADERS_URL: /],
    [{ ARC_TIMEOUT_MS: '10' }, /^ARC_TIMEOUT_MS: /],
    [{ ARC_CALLBACK_URL: 'https://me.example/arc' }, /^ARC_CALLBACK_TOKEN: .*set together/],
    [{ ARC_CALLBACK_GRACE_MS: '-1' }, /^ARC_CALLBACK_GRACE_MS: /],
    [
      { ARC_CALLBACK_URL: 'https://me.example/arc', ARC_CALLBACK_TOKEN: 'short' },
      /^ARC_CALLBACK_TOKEN: must be at least 16/,
    ],
    [{ RATE_LIMIT_PER_KEY: '0' }, /^RATE_LIMIT_PER_KEY: must be requests per second/],
    [{ RATE_LIMIT_PER_TENANT: '10/' }, /^RATE_LIMIT_PER_TENANT: /],
    [{ RATE_LIMIT_PER_KEY: '1.5' }, /^RATE_LIMIT_PER_KEY: /],
    [{ ADMIN_UI: 'maybe' }, /^ADMIN_UI: must be true or false/],
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
