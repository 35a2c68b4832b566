/**
 * Load against real processes: requests each on their own connection, so a refused connection or
 * a request cut by a dying process is counted as one (the outage probe, the kill specs).
 */
import http from 'node:http';

export interface Answer {
  readonly method: string;
  readonly path: string;
  /** HTTP status, or 0 when no answer came. */
  readonly status: number;
  /** The socket error when no answer came (ECONNREFUSED, ECONNRESET, ...). */
  readonly error?: string;
  readonly errorCode?: string;
  readonly retryAfter?: string;
  readonly body: string;
  readonly ms: number;
  readonly startedAt: number;
}

/**
 * One request on its own connection (`agent: false`: no pooled connection to a dead process is
 * ever reused, so a failure is either a refused connection or a request in flight).
 */
export function request(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
  timeoutMs = 10_000,
): Promise<Answer> {
  const startedAt = Date.now();
  const t0 = performance.now();
  return new Promise((resolve) => {
    const url = new URL(path, base);
    const req = http.request(
      url,
      {
        method,
        headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e: NodeJS.ErrnoException) =>
          resolve({
            method,
            path,
            status: 0,
            error: e.code ?? e.message,
            body: '',
            ms: performance.now() - t0,
            startedAt,
          }),
        );
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let errorCode: string | undefined;
          try {
            const parsed = JSON.parse(text) as { errorCode?: string; errors?: { extensions?: { code?: string } }[] };
            errorCode = parsed.errorCode ?? parsed.errors?.[0]?.extensions?.code;
          } catch {
            errorCode = undefined;
          }
          const retryAfter = res.headers['retry-after'];
          resolve({
            method,
            path,
            status: res.statusCode ?? 0,
            ...(errorCode !== undefined ? { errorCode } : {}),
            ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
            body: text,
            ms: performance.now() - t0,
            startedAt,
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })));
    req.on('error', (e: NodeJS.ErrnoException) =>
      resolve({ method, path, status: 0, error: e.code ?? e.message, body: '', ms: performance.now() - t0, startedAt }),
    );
    req.end(body);
  });
}

/** A request a load loop sends: built per call so writes get fresh bodies. */
export type RequestSpec = () => { method: string; path: string; headers?: Record<string, string>; body?: string };

export interface Load {
  /** Stops sending; resolves with every answer once the requests in flight have answered. */
  stop(): Promise<Answer[]>;
  answers(): readonly Answer[];
}

/** `concurrency` loops, each sending one of `specs` (picked at random) as soon as its previous answer came. */
export function startLoad(base: string, specs: readonly RequestSpec[], concurrency: number): Load {
  const answers: Answer[] = [];
  let running = true;
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) {
      const spec = specs[Math.floor(Math.random() * specs.length)];
      if (!spec) return;
      const r = spec();
      answers.push(await request(base, r.method, r.path, r.headers ?? {}, r.body));
    }
  });
  return {
    answers: () => answers,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return answers;
    },
  };
}
