import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix } from '@proofline/shared-redis';
import { uniquePrefix } from '@proofline/shared-testing';
import { startTestKeyWorker } from '@proofline/identity-testing';
import { generateRawKey } from '@proofline/identity-domain';
import { createApp } from './app';
import { fundPool } from '@proofline/records-testing';
import { composeApi } from './compose';
import type { ComposedApi } from './compose';
import { testConfig } from './testing/harness';
import { send } from './testing/rest-client';

/**
 * Logs are JSON lines with a request id on every line of a request, and never a raw key, an
 * update token or a record body — checked on the real composition with a debug-level logger.
 */
describe('structured logs', () => {
  const prefix = uniquePrefix('logs');
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l.length > 0),
      );
      done();
    },
  });
  const bootstrap = generateRawKey();
  const config = testConfig(prefix, { BOOTSTRAP_API_KEY: bootstrap, LOG_LEVEL: 'debug' });
  let composed: ComposedApi;
  let server: http.Server;
  let base: string;
  let worker: { close(): Promise<void> };

  beforeAll(async () => {
    const logger = createLogger({ level: 'debug', name: 'api', destination: sink });
    composed = await composeApi(config, logger, systemClock);
    await fundPool(composed.recordsScope.wallet.pool, 5, 1000);
    worker = await startTestKeyWorker({ config, logger });
    server = http.createServer(createApp(composed.deps));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await worker.close();
    await deleteByPrefix(composed.deps.redis, prefix);
    await composed.close();
  });

  it('carry the request id and none of the secrets or record bytes', async () => {
    const secretBody = 'TOP-SECRET-RECORD-BODY-0123456789';
    const created = await send(base, 'POST', '/api/v1/auth/identity-api-keys', {
      key: bootstrap,
      headers: { 'x-request-id': 'req-keys-1' },
      body: { name: 'logged-key', issuerPermission: 'Issuer_User' },
    });
    expect(created.status).toBe(201);
    const { rawKey } = (await created.json()) as { rawKey: string };
    const write = await send(base, 'POST', '/api/v1/linkedrecords', {
      key: rawKey,
      contentType: 'application/octet-stream',
      headers: { 'x-request-id': 'req-write-1' },
      body: secretBody,
    });
    expect(write.status).toBe(200);
    const { txId, updateToken } = (await write.json()) as { txId: string; updateToken: string };
    const update = await send(
      base,
      'POST',
      `/api/v1/linkedrecords/${txId}/update?updateToken=${encodeURIComponent(updateToken)}`,
      {
        key: rawKey,
        contentType: 'application/octet-stream',
        headers: { 'x-request-id': 'req-update-1' },
        body: 'next',
      },
    );
    expect(update.status).toBe(200);
    const refused = await send(base, 'GET', '/api/v1/auth/identity-api-keys', {
      key: `idty_${'A'.repeat(32)}`,
      headers: { 'x-request-id': 'req-bad-1' },
    });
    expect(refused.status).toBe(401);

    const all = lines.join('\n');
    for (const secret of [bootstrap, rawKey, updateToken, secretBody, `idty_${'A'.repeat(32)}`])
      expect(all).not.toContain(secret);
    const parsed = lines.map((l) => JSON.parse(l) as { reqId?: string; msg: string; path?: string });
    for (const id of ['req-keys-1', 'req-write-1', 'req-update-1', 'req-bad-1']) {
      expect(parsed.some((l) => l.reqId === id && l.msg === 'request')).toBe(true);
    }
    expect(parsed.filter((l) => l.msg === 'request').every((l) => typeof l.reqId === 'string')).toBe(true);
  });
});
