import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '@proofline/shared-config';
import { createLogger } from '@proofline/shared-logger';
import { deleteByPrefix } from '@proofline/shared-redis';
import { uniquePrefix } from '@proofline/shared-testing';
import { generateRawKey } from '@proofline/identity-domain';
import { createApp } from './app';
import { composeApi } from './compose';
import type { ComposedApi } from './compose';
import { fundPool } from '@proofline/records-testing';
import { testConfig } from './testing/harness';
import { PUBLISH_EVENTS_MAX_LEN } from '@proofline/records-publication';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';

describe('GET /metrics (production composition)', () => {
  const prefix = uniquePrefix('metrics');
  const key = generateRawKey();
  let composed: ComposedApi;
  let server: http.Server;
  let base: string;
  let writtenTxId = '';

  beforeAll(async () => {
    composed = await composeApi(
      testConfig(prefix, { BOOTSTRAP_API_KEY: key }),
      createLogger({ level: 'silent', name: 't' }),
      systemClock,
    );
    await fundPool(composed.recordsScope.wallet.pool, 5, 1000);
    server = http.createServer(createApp(composed.deps));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await deleteByPrefix(composed.deps.redis, prefix);
    await composed.close();
  });

  it('counts requests by route pattern (never the raw id) and reports queues, backlog and tip', async () => {
    const octet = { 'x-api-key': key, 'content-type': 'application/octet-stream' };
    const written = (await (
      await fetch(`${base}/api/v1/records`, { method: 'POST', headers: octet, body: 'metered' })
    ).json()) as { txId: string };
    await fetch(`${base}/api/v1/records/${written.txId}/status`, { headers: octet });
    await fetch(`${base}/api/v1/records/${'f'.repeat(64)}/status`, { headers: octet });
    await fetch(`${base}/no/such/route`);
    // the answer does not wait for the publish job (the outbox holds the record); count it once it is in the queue
    await composed.recordsScope.queue.idle();

    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain(
      'proofline_http_requests_total{method="POST",route="/api/v1/records",status="200",app="proofline-api"} 1',
    );
    expect(text).toContain(
      'proofline_http_requests_total{method="GET",route="/api/v1/records/:txId/status",status="200",app="proofline-api"} 1',
    );
    expect(text).toContain(
      'proofline_http_requests_total{method="GET",route="/api/v1/records/:txId/status",status="404",app="proofline-api"} 1',
    );
    expect(text).toContain(
      'proofline_http_requests_total{method="GET",route="unmatched",status="404",app="proofline-api"} 1',
    );
    expect(text).not.toContain(written.txId);
    writtenTxId = written.txId;
    expect(text).toContain(
      'proofline_http_request_duration_seconds_count{app="proofline-api",method="POST",route="/api/v1/records"} 1',
    );
    expect(text).toContain(
      'proofline_http_request_duration_seconds_bucket{le="+Inf",app="proofline-api",method="GET",route="/api/v1/records/:txId/status"} 2',
    );
    // no worker runs here: the write waits in the outbox and its publish job in the queue
    expect(text).toContain('proofline_records_pending_publication{app="proofline-api"} 1');
    expect(text).toContain('proofline_queue_jobs{queue="records-publish",state="waiting",app="proofline-api"} 1');
    expect(text).toContain('proofline_chain_tip_height{app="proofline-api"} -1');
    expect(text).toContain('proofline_process_cpu_seconds_total');
  });

  it('keeps counting on the same series request after request (label sets reused per route and status)', async () => {
    const headers = { 'x-api-key': key };
    for (let i = 0; i < 3; i++)
      expect((await fetch(`${base}/api/v1/records/${writtenTxId}/status`, { headers })).status).toBe(200);
    expect((await fetch(`${base}/api/v1/records/${'e'.repeat(64)}/status`, { headers })).status).toBe(404);
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toContain(
      'proofline_http_requests_total{method="GET",route="/api/v1/records/:txId/status",status="200",app="proofline-api"} 4',
    );
    expect(text).toContain(
      'proofline_http_requests_total{method="GET",route="/api/v1/records/:txId/status",status="404",app="proofline-api"} 2',
    );
    expect(text).toContain(
      'proofline_http_request_duration_seconds_count{app="proofline-api",method="GET",route="/api/v1/records/:txId/status"} 6',
    );
    expect(text).toContain(
      'proofline_http_requests_total{method="GET",route="/metrics",status="200",app="proofline-api"} 1',
    );
  });

  it("keeps the records queue's event-stream cap: its observers (metrics, dashboard) never rewrite a queue's meta", async () => {
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(
      await composed.deps.redis.hget(
        `${bullPrefix(prefix, QUEUES.recordsPublish)}:${QUEUES.recordsPublish}:meta`,
        'opts.maxLenEvents',
      ),
    ).toBe(String(PUBLISH_EVENTS_MAX_LEN));
  });
});
