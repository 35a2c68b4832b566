import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ArcProofStore, syntheticBlock } from '@proofline/chain-arc';
import { ClaimsService } from '@proofline/identity-claims';
import { recordsKeys } from '@proofline/records-data-access';
import { loadConfig, systemClock } from '@proofline/shared-config';
import { testRedis, testRedisEnv, uniquePrefix } from '@proofline/shared-testing';

const ROOT = path.resolve(__dirname, '../../..');

describe('operator CLI (run as a real process)', () => {
  const prefix = uniquePrefix('cli');
  const { redis, cleanup } = testRedis(prefix);
  const env = { ...process.env, ...testRedisEnv(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' };
  const cli = (args: string[], extraEnv: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'apps/cli/src/main.ts'), ...args], {
      cwd: ROOT,
      env: { ...env, ...extraEnv },
      encoding: 'utf8',
      timeout: 30_000,
    });

  afterAll(cleanup);

  it('keys bootstrap prints one raw admin key and stores only its hash', async () => {
    const out = cli(['keys', 'bootstrap', '--tenant', 'acme']);
    expect(out.status).toBe(0);
    const raw = out.stdout.trim();
    expect(raw).toMatch(/^idty_[A-Za-z0-9]{32}$/);
    const hash = createHash('sha256').update(raw).digest('hex');
    const keys = await redis.keys(`${prefix}:*`);
    const dump = (
      await Promise.all(
        keys.map(async (k) =>
          JSON.stringify((await redis.type(k)) === 'hash' ? await redis.hgetall(k) : await redis.dump(k)),
        ),
      )
    ).join('\n');
    expect(dump).toContain(hash);
    expect(dump).not.toContain(raw);
  });

  it('legacy import is idempotent and reports what it did', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pl-cli-')), 'legacy.json');
    fs.writeFileSync(
      file,
      JSON.stringify([
        {
          id: 7,
          name: 'old-key',
          status: 'Active',
          createdAt: '2026-01-01T00:00:00Z',
          rawKey: 'legacyRawKey0123456789abcdef',
        },
      ]),
    );
    const first = cli(['legacy', 'import', file, '--tenant', 'acme']);
    expect(first.status).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ total: 1, imported: 1, skipped: 0, conflicts: [] });
    expect(JSON.parse(cli(['legacy', 'import', file, '--tenant', 'acme']).stdout)).toMatchObject({
      imported: 0,
      skipped: 1,
    });
    fs.writeFileSync(file, '[{"id":"x"}]');
    const bad = cli(['legacy', 'import', file]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/item 0\.id/);
  });

  it('token mint prints a JWT the claims endpoint accepts', async () => {
    const out = cli(['token', 'mint', '--claims', 'Issuer,Verifier', '--ttl', '120']);
    expect(out.status).toBe(0);
    const claims = new ClaimsService({ config: loadConfig(env), redis, clock: systemClock });
    expect(await claims.grantedClaims(`Bearer ${out.stdout.trim()}`)).toEqual({
      grantedClaims: ['Issuer', 'Verifier'],
    });
  });

  it("chain index-owners indexes proofs stored before the tenant block index by each record's tenant, once", async () => {
    // Three proven transactions: two records of tenant acme, one that is no record (a wallet split).
    const block = syntheticBlock(3, 7);
    const { txIds } = block;
    const store = new ArcProofStore(redis, prefix);
    await store.storeProofs(block.proofs);
    const acme = { family: 'independent', kind: 'independent', tenant: 'acme' };
    for (const txId of [txIds[0], txIds[2]]) await redis.hset(recordsKeys(prefix).record(txId ?? ''), acme);
    expect((await store.ownerBlocks('acme', { first: 5 })).total).toBe(0);

    // Records written under `rec` by hand: the one partition of REDIS_PARTITIONS=1.
    const out = cli(['chain', 'index-owners'], { REDIS_PARTITIONS: '1' });
    expect(out.status).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ blocks: 1, added: 2 });
    expect((await store.ownerBlocks('acme', { first: 5 })).blocks).toMatchObject([
      { hash: block.hash, height: 7, count: 2 },
    ]);
    expect((await store.ownerTxIds('acme', block.hash, 0, 5)).txIds).toEqual([txIds[0], txIds[2]]);
    expect(JSON.parse(cli(['chain', 'index-owners']).stdout)).toEqual({ blocks: 1, added: 0 });
  });

  it('exits 2 with usage on an unknown command and 78 on bad configuration', () => {
    const unknown = cli(['frobnicate']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('usage: npm run cli');
    const badConfig = cli(['keys', 'bootstrap'], { KEY_LIMIT: 'lots' });
    expect(badConfig.status).toBe(78);
    expect(badConfig.stderr.trim()).toMatch(/^proofline cli: configuration error: KEY_LIMIT: /);
  });
});
