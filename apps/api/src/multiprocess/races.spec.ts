/**
 * The concurrency rules across real processes: two API processes and two worker processes
 * (started exactly as `npm start` starts them) race on one Redis.
 *  - one key slot left: 20 concurrent creates spread over both APIs -> exactly one 201;
 *  - 50 concurrent updates of one linked record spread over both APIs -> exactly one 200;
 *  - the winner is published and mined once; SIGKILLed workers lose no accepted write;
 *  - SIGTERM lets an in-flight request finish before the API process exits.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { devnetKeys } from '@proofline/chain-devnet';
import { generateRawKey } from '@proofline/identity-domain';
import { eventually, freePort, testRedis, testRedisUrl, uniquePrefix } from '@proofline/shared-testing';

const ROOT = path.resolve(__dirname, '../../../..');


describe('races, crashes and shutdown across real processes', () => {
  const prefix = uniquePrefix('mp');
  const { redis, cleanup } = testRedis(prefix);
  const bootstrap = generateRawKey();
  const children: ChildProcess[] = [];
  const bases: string[] = [];
  const apis: ChildProcess[] = [];

  const start = (entry: string, env: Record<string, string>) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], {
      cwd: ROOT,
      env: { ...process.env, REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'silent', BOOTSTRAP_API_KEY: bootstrap, KEY_LIMIT: '2', BLOCK_INTERVAL_MS: '500', ...env },
      stdio: 'ignore',
    });
    children.push(child);
    return child;
  };
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i += 1) {
      const port = await freePort();
      apis.push(start('apps/api/src/main.ts', { PORT: String(port), HOST: '127.0.0.1' }));
      bases.push(`http://127.0.0.1:${port}`);
    }
    workers.push(start('apps/worker/src/main.ts', {}), start('apps/worker/src/main.ts', {}));
    for (const base of bases) {
      await eventually(async () => (await fetch(`${base}/readiness`)).status === 200, 60_000, 200);
    }
  }, 90_000);

  afterAll(async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
          }),
      ),
    );
    await cleanup();
  }, 30_000);

  it('one key slot left: exactly one of 20 creates over two API processes wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${bases[i % 2]}/api/v1/auth/identity-api-keys`, {
          method: 'POST',
          headers: { 'x-api-key': bootstrap, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `racer-${i}`, issuerPermission: 'Issuer_User' }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { errorCode?: string } })),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const losers = results.filter((r) => r.status !== 201);
    expect(losers.every((r) => r.status === 403 && r.body.errorCode === 'identity_api_key_limit_exceeded')).toBe(true);
    const usage = (await (await fetch(`${bases[1]}/api/v1/auth/identity-api-keys/usage`, { headers: { 'x-api-key': bootstrap } })).json()) as { used: number; limit: number };
    expect(usage).toEqual({ used: 2, limit: 2 });
  });

  it('exactly one of 50 concurrent updates of one record over two API processes wins, and it is mined once', async () => {
    const octet = { 'x-api-key': bootstrap, 'content-type': 'application/octet-stream' };
    const created = (await (await fetch(`${bases[0]}/api/v1/linkedrecords`, { method: 'POST', headers: octet, body: 'root' })).json()) as { txId: string };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        fetch(`${bases[i % 2]}/api/v1/linkedrecords/${created.txId}/update`, { method: 'POST', headers: octet, body: `v${i}` }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { txId?: string; errorCode?: string },
        })),
      ),
    );
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.errorCode === 'NOT_LINKED_RECORDS_END')).toHaveLength(49);

    const winner = winners[0]?.body.txId as string;
    const nav = (await (await fetch(`${bases[1]}/api/v1/linkedrecords/${created.txId}/navigate?links=10`, { headers: octet })).json()) as { txIds: string[] };
    expect(nav.txIds).toEqual([winner]);
    const status = await eventually(async () => {
      const s = (await (await fetch(`${bases[0]}/api/v1/linkedrecords/${winner}/status`, { headers: octet })).json()) as { confirmation: { blockHash: string } | null };
      return s.confirmation;
    }, 20_000, 100);
    // the winning transaction sits in exactly one block
    const blocks = await redis.hgetall(devnetKeys(prefix).blockTxIds);
    const holding = Object.values(blocks).filter((txids) => txids.includes(winner));
    expect(holding).toHaveLength(1);
    expect(status.blockHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('accepted writes survive killed workers: SIGKILL both, write, start a new one, all are mined once', async () => {
    await Promise.all(workers.map((w) => new Promise<void>((resolve) => { w.once('exit', () => resolve()); w.kill('SIGKILL'); })));
    const octet = { 'x-api-key': bootstrap, 'content-type': 'application/octet-stream' };
    const txIds = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const r = await fetch(`${bases[i % 2]}/api/v1/records?encode=SHA256`, { method: 'POST', headers: octet, body: `survivor-${i}` });
        expect(r.status).toBe(200);
        return ((await r.json()) as { txId: string }).txId;
      }),
    );
    start('apps/worker/src/main.ts', {});
    await eventually(async () => {
      const statuses = await Promise.all(
        txIds.map(async (tx) => ((await (await fetch(`${bases[0]}/api/v1/records/${tx}/status`, { headers: octet })).json()) as { confirmation: unknown }).confirmation),
      );
      return statuses.every((c) => c !== null);
    }, 30_000, 200);
    const blocks = Object.values(await redis.hgetall(devnetKeys(prefix).blockTxIds));
    for (const tx of txIds) expect(blocks.filter((list) => list.includes(tx))).toHaveLength(1);
  }, 60_000);

  it('SIGTERM lets an in-flight request finish, then the API process exits and refuses new connections', async () => {
    const api = apis[1] as ChildProcess;
    const url = new URL(`${bases[1]}/api/v1/records?encode=SHA256`);
    const body = Buffer.from('a record whose upload straddles the shutdown');
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent: false, headers: { 'x-api-key': bootstrap, 'content-type': 'application/octet-stream', 'content-length': body.length } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(body.subarray(0, 10));
      // the request is in flight (headers and part of the body sent): stop the process now
      setTimeout(() => {
        api.kill('SIGTERM');
        setTimeout(() => req.end(body.subarray(10)), 300);
      }, 200);
    });
    const exited = new Promise<number | null>((resolve) => api.once('exit', (code) => resolve(code)));
    const res = await response;
    expect(res.status).toBe(200);
    const { txId } = JSON.parse(res.text) as { txId: string };
    expect(await exited).toBe(0);
    await expect(fetch(`${bases[1]}/liveness`)).rejects.toThrow();
    // the write it accepted while stopping is durable and readable through the other instance
    const content = await fetch(`${bases[0]}/api/v1/records/${txId}/content`, { headers: { 'x-api-key': bootstrap } });
    expect(content.status).toBe(200);
  }, 30_000);
});
