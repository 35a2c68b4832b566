import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { createLogger, logScope } from '@proofline/shared-logger';
import { unavailable } from '@proofline/shared-errors';
import { problemHandler, requestContext } from './edge';

/** A real Express app on a real socket with `requestContext` and one route logging at warn. */
async function serve(
  level: string,
): Promise<{ base: string; lines: Record<string, unknown>[]; listeners: number[]; close(): Promise<void> }> {
  const lines: Record<string, unknown>[] = [];
  const listeners: number[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n'))
        if (l.length > 0) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const app = express();
  const before = new WeakMap<object, number>();
  app.use((_req, res, next) => {
    before.set(res, res.listenerCount('finish')); // node's own listeners, whatever they are
    next();
  });
  app.use(requestContext(createLogger({ level, name: 'spec', destination: sink })));
  app.get('/work/:n', (req, res) => {
    listeners.push(res.listenerCount('finish') - (before.get(res) ?? 0)); // added by requestContext
    req.log.warn({ inScope: logScope.getStore()?.reqId === req.id }, 'working');
    res.status(201).json({ n: req.params['n'] });
  });
  app.get('/busy', () => {
    throw unavailable('FUNDING_EXHAUSTED', 'No funding right now.', 2);
  });
  app.get('/broken', () => {
    throw new Error('boom');
  });
  app.use(problemHandler());
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, lines, listeners, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** pino writes asynchronously to a stream: wait until `n` lines arrived (or fail after 2 s). */
async function linesAtLeast(lines: unknown[], n: number): Promise<void> {
  const deadline = Date.now() + 2000;
  while (lines.length < n && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  expect(lines.length).toBeGreaterThanOrEqual(n);
}

describe('requestContext', () => {
  it('back-pressure (503 with Retry-After) is a warn line without a stack; a fault is an error line with one', async () => {
    const s = await serve('info');
    try {
      const busy = await fetch(`${s.base}/busy`);
      expect(busy.status).toBe(503);
      expect(busy.headers.get('retry-after')).toBe('2');
      expect(await busy.json()).toMatchObject({ errorCode: 'FUNDING_EXHAUSTED' });
      expect((await fetch(`${s.base}/broken`)).status).toBe(500);
      await linesAtLeast(s.lines, 4);
      const refused = s.lines.find((l) => l['msg'] === 'request refused: retry later');
      expect(refused).toMatchObject({ level: 'warn', errorCode: 'FUNDING_EXHAUSTED' });
      expect(refused?.['err']).toBeUndefined();
      const failed = s.lines.filter((l) => l['msg'] === 'request failed');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ level: 'error' });
      expect(JSON.stringify(failed[0]?.['err'])).toContain('boom');
    } finally {
      await s.close();
    }
  });

  it('at info: one access line per request with the request id, path without query, status and duration', async () => {
    const s = await serve('info');
    try {
      const res = await fetch(`${s.base}/work/7?updateToken=utk_secret`, { headers: { 'x-request-id': 'req-a1' } });
      expect(res.status).toBe(201);
      expect(res.headers.get('x-request-id')).toBe('req-a1');
      await linesAtLeast(s.lines, 2);
      const access = s.lines.filter((l) => l['msg'] === 'request');
      expect(access).toHaveLength(1);
      expect(access[0]).toMatchObject({ reqId: 'req-a1', method: 'GET', path: '/work/7', status: 201 });
      expect(typeof access[0]?.['ms']).toBe('number');
      expect(JSON.stringify(s.lines)).not.toContain('utk_secret');
      expect(s.lines.find((l) => l['msg'] === 'working')).toMatchObject({ reqId: 'req-a1', inScope: true });
      expect(s.listeners).toEqual([1]); // the access-line listener
    } finally {
      await s.close();
    }
  });

  it('above info (LOG_LEVEL=warn): no access line and no finish listener, but the scope still tags every line', async () => {
    const s = await serve('warn');
    try {
      for (const id of ['req-b1', 'req-b2'])
        expect((await fetch(`${s.base}/work/1`, { headers: { 'x-request-id': id } })).status).toBe(201);
      await linesAtLeast(s.lines, 2);
      expect(s.lines.filter((l) => l['msg'] === 'request')).toEqual([]);
      expect(s.lines.map((l) => [l['msg'], l['reqId'], l['inScope']])).toEqual([
        ['working', 'req-b1', true],
        ['working', 'req-b2', true],
      ]);
      expect(s.listeners).toEqual([0, 0]);
    } finally {
      await s.close();
    }
  });
});
