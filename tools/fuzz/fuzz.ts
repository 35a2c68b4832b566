/**
 * A seeded HTTP fuzzer for the REST and GraphQL processes (`npm run fuzz`, tools/fuzz/fuzz.spec.ts).
 *
 * Requests are random but reproducible from the seed: methods (also unknown ones), real route
 * paths with odd bytes, query strings, headers (keys valid and not, content types, encodings,
 * request ids), bodies (bytes, broken and deep JSON), GraphQL documents and variables mutated from
 * real queries over POST/GET/urlencoded, and raw request lines Node's HTTP parser refuses. Each
 * answer is checked: no status >= 500, no `originalError`, no stack trace, and every REST 4xx is
 * problem+json with an `errorCode`.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { FundingPool } from '@proofline/chain-wallet';
import { fundPool } from '@proofline/records-testing';
import { openRedis, resolvePartitions } from '@proofline/shared-redis';
import { freePort, rawExchange } from '@proofline/shared-testing';

const ROOT = path.resolve(__dirname, '..', '..');

/** mulberry32: a small seeded PRNG, enough for reproducible fuzzing. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const pick = <T>(r: Rand, items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;
const chance = (r: Rand, p: number): boolean => r() < p;
const int = (r: Rand, max: number): number => Math.floor(r() * max);

const hex = (r: Rand, n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(r, 16)]).join('');
const TX = (r: Rand) =>
  pick(r, [
    hex(r, 64),
    hex(r, 64).toUpperCase(),
    hex(r, 63),
    hex(r, 65),
    'not-a-txid',
    '',
    '%00',
    '..',
    'ffff%2Fffff',
    '\u00e9',
    '0'.repeat(64),
  ]);
const ODD = [
  '%00',
  '%ff',
  '%2e%2e',
  '%2F',
  '%',
  '%zz',
  '..',
  '//',
  ';x',
  '~',
  '\u00e9',
  '%E2%80%A6',
  'a'.repeat(3000),
  '%C0%AF',
  '*',
  '"',
  '<>',
  '{}',
  '|',
];

function oddSegment(r: Rand): string {
  const s = pick(r, ODD);
  return /^[\x21-\x7e]*$/.test(s) ? s : encodeURIComponent(s);
}

const REST_PATHS: ((r: Rand) => string)[] = [
  () => '/api/v1/records',
  (r) => `/api/v1/records/${TX(r)}`,
  (r) => `/api/v1/records/${TX(r)}/status`,
  (r) => `/api/v1/records/${TX(r)}/content`,
  (r) => `/api/v1/records/${TX(r)}/match`,
  () => '/api/v1/linkedrecords',
  (r) => `/api/v1/linkedrecords/${TX(r)}/status`,
  (r) => `/api/v1/linkedrecords/${TX(r)}/content`,
  (r) => `/api/v1/linkedrecords/${TX(r)}/navigate`,
  (r) => `/api/v1/linkedrecords/${TX(r)}/update`,
  (r) => `/api/v1/linkedrecords/${TX(r)}/delete`,
  (r) => `/api/v1/linkedrecords/${TX(r)}/match`,
  () => '/api/v1/auth/identity-api-keys',
  () => '/api/v1/auth/identity-api-keys/usage',
  (r) => `/api/v1/auth/identity-api-keys/${oddSegment(r)}`,
  (r) => `/api/v1/auth/identity-api-keys/${hex(r, 8)}/revoke`,
  () => '/api/v1/psp/product-manager/customer-user-api-keys',
  () => '/api/v1/psp/product-manager/customer-user-api-keys/usage',
  (r) => `/api/v1/psp/product-manager/customer-user-api-keys/${oddSegment(r)}`,
  () => '/api/v1/auth/granted-claims',
  () => '/auth/granted-claims',
  () => '/api/v1/openapi.json',
  () => '/liveness',
  () => '/readiness',
  () => '/metrics',
  (r) => `/${oddSegment(r)}`,
  (r) => `/api/v1/${oddSegment(r)}/${oddSegment(r)}`,
];

const CONTENT_TYPES = [
  'application/json',
  'application/octet-stream',
  'text/plain',
  'application/json; charset=utf-16',
  'application/json; charset=bogus',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'multipart/form-data',
  'application/graphql',
  'application/graphql-response+json',
  'application/*+json',
  '*/*',
  ';;;',
  'application/json, text/plain',
  'image/png',
];
const ACCEPTS = [
  '*/*',
  'application/json',
  'application/graphql-response+json',
  'text/event-stream',
  'image/png',
  'text/html',
  'application/problem+json',
  '',
];

function jsonValue(r: Rand, depth = 0): unknown {
  switch (int(r, depth > 3 ? 5 : 8)) {
    case 0:
      return null;
    case 1:
      return pick(r, [0, -1, 1.5, 1e308, 2 ** 53, -0]);
    case 2:
      return pick(r, ['', 'x', 'SHA256', 'Base64', 'sha256', '\u0000', '\u00e9\u2026', 'a'.repeat(500), hex(r, 64)]);
    case 3:
      return chance(r, 0.5);
    case 4:
      return pick(r, ['Issuer_Admin', 'Verifier_Admin', 'Issuer', 'Verifier', 'root']);
    case 5:
      return Array.from({ length: int(r, 4) }, () => jsonValue(r, depth + 1));
    default: {
      const keys = [
        'name',
        'permissions',
        'body',
        'encode',
        'data',
        'hash',
        'updateToken',
        'apiKeyId',
        'expiresAt',
        '__proto__',
        'constructor',
        'x',
      ];
      return Object.fromEntries(Array.from({ length: int(r, 4) }, () => [pick(r, keys), jsonValue(r, depth + 1)]));
    }
  }
}

function body(r: Rand): Buffer | undefined {
  switch (int(r, 8)) {
    case 0:
      return undefined;
    case 1:
      return Buffer.alloc(0);
    case 2:
      return randomBytesFrom(r, int(r, 2048));
    case 3:
      return Buffer.from(JSON.stringify(jsonValue(r)));
    case 4: {
      const text = JSON.stringify(jsonValue(r));
      return Buffer.from(text.slice(0, int(r, text.length + 1)) + pick(r, ['', '}', ']', ',', '"', '\\']));
    }
    case 5:
      return Buffer.from('['.repeat(2000) + ']'.repeat(2000));
    case 6:
      return Buffer.from(pick(r, ['null', '1', '"x"', 'true', '{}', '[]', '{"a":1}{"b":2}', '\ufeff{}']));
    default:
      return Buffer.from('x'.repeat(int(r, 200_000)));
  }
}

function randomBytesFrom(r: Rand, n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i += 1) out[i] = int(r, 256);
  return out;
}

function queryString(r: Rand): string {
  if (chance(r, 0.5)) return '';
  const keys = [
    'limit',
    'first',
    'after',
    'depth',
    'encode',
    'updateToken',
    'direction',
    'x',
    'a[b]',
    'a[]',
    '__proto__',
    'query',
    'variables',
  ];
  const values = [
    '1',
    '-1',
    '0',
    '1e9',
    'abc',
    '',
    '%zz',
    '%00',
    'null',
    '[]',
    '{',
    'true',
    hex(r, 64),
    'a'.repeat(2000),
  ];
  return `?${Array.from({ length: 1 + int(r, 4) }, () => `${pick(r, keys)}=${pick(r, values)}`).join('&')}`;
}

// GraphQL documents taken from the schema's real queries, then mutated.
const DOCUMENTS = [
  '{ health version }',
  '{ tip { height hash } }',
  '{ me { id tenant permissions } }',
  'query R($t: String!) { record(txId: $t) { __typename ... on IndependentRecord { txId status } ... on NotFoundError { code message } } }',
  'query L($t: String!, $n: Int) { linkedRecord(txId: $t) { __typename ... on LinkedRecord { txId history(first: $n) { edges { node { txId } } } } ... on InvalidArgumentError { code } } }',
  'query B($h: Int, $x: String) { block(height: $h, hash: $x) { __typename ... on Block { hash height transactions(first: 2) { edges { cursor } } } } }',
  '{ apiKeys { id name permissions } apiKeyUsage { used limit } }',
  'subscription { blocks { height } }',
  'mutation { x }',
  '{ __schema { types { name } } }',
  '{ block(height: 0) { __typename ... on Block { previous { previous { previous { hash } } } } } }',
];

function mutateDocument(r: Rand, doc: string): string {
  let out = doc;
  for (let i = int(r, 4); i > 0; i -= 1) {
    const at = int(r, out.length + 1);
    switch (int(r, 5)) {
      case 0:
        out = out.slice(0, at) + out.slice(at + 1 + int(r, 5));
        break;
      case 1:
        out =
          out.slice(0, at) +
          pick(r, ['{', '}', '(', ')', '$', '!', '"', '...', '@skip(if: $x)', '#', '\u0000', ' on ', 'Int', ':']) +
          out.slice(at);
        break;
      case 2:
        out = out + out;
        break;
      case 3:
        out = out.replace(
          pick(r, ['String!', 'Int', 'txId', 'first']),
          pick(r, ['Int!', 'Boolean', '[String]', 'Unknown', '']),
        );
        break;
      default:
        out =
          out.slice(0, at) +
          pick(r, ['{ health }', 'fragment F on Query { health }', 'query Q { ...F }']) +
          out.slice(at);
    }
  }
  return out;
}

function variables(r: Rand): unknown {
  if (chance(r, 0.2)) return jsonValue(r);
  const t = pick(r, [hex(r, 64), 1, null, '', [hex(r, 64)], { a: 1 }, 'x'.repeat(1000), true]);
  return {
    t,
    n: pick(r, [1, -1, 0, 1e9, 'x', null, 1.5]),
    h: pick(r, [0, -1, 2 ** 31, 'x', null]),
    x: pick(r, [hex(r, 64), 1, null]),
  };
}

export interface FuzzRequest {
  readonly target: 'rest' | 'graphql';
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer | undefined;
  /** Sent as raw bytes on a socket instead (what Node's parser refuses). */
  readonly raw?: string;
}

function headers(r: Rand, key: string): Record<string, string> {
  const h: Record<string, string> = {};
  if (chance(r, 0.6)) h['x-api-key'] = pick(r, [key, key, `idty_${hex(r, 32)}`, 'x', '', key.toUpperCase(), `${key} `]);
  if (chance(r, 0.15))
    h['authorization'] = pick(r, [
      'Bearer x',
      'Bearer a.b.c',
      'Basic Zm9vOmJhcg==',
      'Bearer ',
      `Bearer ${'a'.repeat(3000)}`,
    ]);
  if (chance(r, 0.7)) h['content-type'] = pick(r, CONTENT_TYPES);
  if (chance(r, 0.4)) h['accept'] = pick(r, ACCEPTS);
  if (chance(r, 0.2)) h['x-request-id'] = pick(r, ['abc', 'bad id', 'a'.repeat(300), '../../', hex(r, 16)]);
  if (chance(r, 0.1)) h['content-encoding'] = pick(r, ['gzip', 'deflate', 'br', 'identity', 'bogus']);
  if (chance(r, 0.1)) h['origin'] = pick(r, ['https://evil.example', 'null', 'http://localhost:5173']);
  if (chance(r, 0.05)) h['expect'] = pick(r, ['100-continue', '100-continue', 'bogus', '200-ok']);
  return h;
}

const RAW_LINES = [
  'GARBAGE\r\n\r\n',
  'GET /liveness HTTP/9.9\r\n\r\n',
  'GET\r\n\r\n',
  'GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n',
  'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
  'POST /api/v1/records HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'POST /graphql HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  '\u0000\u0001\u0002\r\n\r\n',
  'GET /liveness HTTP/1.1\r\n\r\n',
  'GET /liveness HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\n\r\n',
  'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
];

/** The `i`-th request of a run with `seed` (deterministic). */
export function fuzzRequest(seed: number, i: number, key: string): FuzzRequest {
  const r = prng(seed * 1_000_003 + i);
  const target = chance(r, 0.5) ? 'rest' : 'graphql';
  if (chance(r, 0.03)) {
    const big = `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    return { target, method: 'RAW', path: '', headers: {}, raw: chance(r, 0.3) ? big : pick(r, RAW_LINES) };
  }
  const method = pick(r, [
    'GET',
    'GET',
    'POST',
    'POST',
    'PUT',
    'PATCH',
    'DELETE',
    'OPTIONS',
    'HEAD',
    'FOO',
    'PROPFIND',
  ]);
  const h = headers(r, key);
  if (target === 'rest') {
    return {
      target,
      method,
      path: pick(r, REST_PATHS)(r) + queryString(r),
      headers: h,
      body: ['GET', 'HEAD'].includes(method) && chance(r, 0.8) ? undefined : body(r),
    };
  }
  const doc = chance(r, 0.7) ? mutateDocument(r, pick(r, DOCUMENTS)) : pick(r, DOCUMENTS);
  const vars = chance(r, 0.7) ? variables(r) : undefined;
  const params: Record<string, unknown> = { query: chance(r, 0.95) ? doc : pick(r, [1, null, ['x']]) };
  if (vars !== undefined) params['variables'] = vars;
  if (chance(r, 0.2)) params['operationName'] = pick(r, ['R', 'L', 'nope', 1, null]);
  if (chance(r, 0.1))
    params['extensions'] = pick(r, [{ persistedQuery: { version: 1, sha256Hash: hex(r, 64) } }, 'x', 1, null]);
  const gqlPath = pick(r, [
    '/graphql',
    '/graphql',
    '/graphql',
    `/graphql/${oddSegment(r)}`,
    `/${oddSegment(r)}`,
    '/readiness',
    '/metrics',
  ]);
  const encoded = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
  switch (int(r, 6)) {
    case 0: {
      const search = Object.entries(params)
        .map(
          ([k, v]) =>
            `${k}=${k === 'query' && typeof v === 'string' ? encodeURIComponent(v) : chance(r, 0.2) ? pick(r, ['%7B', '%zz', '[1]', '7']) : encoded(v)}`,
        )
        .join('&');
      return {
        target,
        method: 'GET',
        path: `${gqlPath}?${search}`,
        headers: { ...h, accept: h['accept'] ?? 'application/json' },
      };
    }
    case 1: {
      const form = Object.entries(params)
        .map(([k, v]) => `${k}=${chance(r, 0.2) ? '%7B' : encoded(v)}`)
        .join('&');
      return {
        target,
        method,
        path: gqlPath,
        headers: { ...h, 'content-type': 'application/x-www-form-urlencoded' },
        body: Buffer.from(form),
      };
    }
    case 2:
      return { target, method, path: gqlPath + queryString(r), headers: h, body: body(r) };
    default:
      return {
        target,
        method: chance(r, 0.85) ? 'POST' : method,
        path: gqlPath,
        headers: { ...h, 'content-type': chance(r, 0.85) ? 'application/json' : (h['content-type'] ?? 'text/plain') },
        body: Buffer.from(chance(r, 0.1) ? JSON.stringify([params, params]) : JSON.stringify(params)),
      };
  }
}

export interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

/** Raw bytes on a socket: the first answer, or status 0 when the connection ended without one. */
async function sendRaw(port: number, bytes: string): Promise<Answer> {
  try {
    const answer = await rawExchange(port, bytes);
    return { status: answer.status, headers: answer.headers, body: answer.body };
  } catch {
    return { status: 0, headers: {}, body: '' };
  }
}

/**
 * Sends one fuzz request. Without an answer, the reason: `CLIENT_REFUSED` (Node's client will
 * not send such a header) or the socket error (e.g. EPIPE when the server answered 413 and closed
 * while the client was still writing the body).
 */
export function send(port: number, req: FuzzRequest): Promise<Answer | { readonly error: string }> {
  if (req.raw !== undefined) return sendRaw(port, req.raw);
  return new Promise((resolve) => {
    let outgoing: http.ClientRequest;
    try {
      outgoing = http.request(
        {
          host: '127.0.0.1',
          port,
          method: req.method,
          path: req.path,
          agent,
          headers: { ...req.headers, ...(req.body ? { 'content-length': String(req.body.length) } : {}) },
          timeout: 15_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
        },
      );
    } catch {
      resolve({ error: 'CLIENT_REFUSED' });
      return;
    }
    outgoing.on('error', (err: Error & { code?: string }) => resolve({ error: err.code ?? err.message }));
    outgoing.on('timeout', () => outgoing.destroy());
    outgoing.end(req.body);
  });
}

const STACK = /\n\s+at [^\n]+:\d+:\d+|\bat [A-Za-z_$.]+ \([^)]*\.(?:ts|js):\d+/;

/** What is wrong with an answer (empty when nothing). */
export function violations(req: FuzzRequest, answer: Answer): string[] {
  const out: string[] = [];
  // `/readiness` answering 503 not-ready is its job (a Redis ping over 1 s under the fuzzer's
  // load, e.g. while 9 MB GraphiQL pages are sent): an operational answer, not an internal error.
  const notReady = answer.status === 503 && req.path.startsWith('/readiness') && answer.body.includes('"not-ready"');
  if (answer.status >= 500 && !notReady) out.push(`status ${answer.status}`);
  if (answer.status === 0) out.push(req.raw === undefined ? 'no status line' : 'raw request without an answer');
  // GraphiQL's page (text/html) is a 9 MB script that names originalError itself.
  const html = String(answer.headers['content-type'] ?? '').startsWith('text/html');
  if (!html && answer.body.includes('originalError')) out.push('originalError in body');
  if (!html && STACK.test(answer.body)) out.push('stack trace in body');
  // What Node's HTTP server refuses (raw requests) is problem+json on both apps, with a request id.
  const protocolLevel = req.raw !== undefined && answer.status >= 400;
  if (protocolLevel && answer.headers['x-request-id'] === undefined)
    out.push(`raw ${answer.status} without x-request-id`);
  if (
    (protocolLevel || req.target === 'rest') &&
    answer.status >= 400 &&
    answer.status < 500 &&
    req.method !== 'HEAD'
  ) {
    const type = String(answer.headers['content-type'] ?? '');
    if (!type.startsWith('application/problem+json'))
      out.push(`${req.raw !== undefined ? 'raw' : 'REST'} ${answer.status} is ${type || 'untyped'}, not problem+json`);
    else {
      try {
        const problem = JSON.parse(answer.body) as { errorCode?: unknown };
        if (typeof problem.errorCode !== 'string') out.push(`REST ${answer.status} without errorCode`);
      } catch {
        out.push(`${req.raw !== undefined ? 'raw' : 'REST'} ${answer.status} body is not JSON`);
      }
    }
  }
  return out;
}

export interface FuzzFigures {
  readonly sent: number;
  /** Requests without an answer, by reason (see {@link send}). */
  readonly noAnswer: Record<string, number>;
  readonly byStatus: Record<string, number>;
  readonly failures: {
    readonly request: FuzzRequest;
    readonly status: number;
    readonly problems: string[];
    readonly body: string;
  }[];
  readonly ms: number;
}

/** Sends `count` seeded requests, `concurrency` at a time, to the REST and GraphQL ports. */
export async function fuzz(opts: {
  seed: number;
  count: number;
  concurrency: number;
  restPort: number;
  graphqlPort: number;
  key: string;
}): Promise<FuzzFigures> {
  const started = Date.now();
  const byStatus: Record<string, number> = {};
  const failures: FuzzFigures['failures'][number][] = [];
  const noAnswer: Record<string, number> = {};
  let next = 0;
  const lane = async () => {
    for (;;) {
      const i = next;
      next += 1;
      if (i >= opts.count) return;
      const req = fuzzRequest(opts.seed, i, opts.key);
      const answer = await send(req.target === 'rest' ? opts.restPort : opts.graphqlPort, req);
      if ('error' in answer) {
        noAnswer[answer.error] = (noAnswer[answer.error] ?? 0) + 1;
        if (process.env['FUZZ_SHOW_NO_ANSWER'])
          process.stdout.write(`no answer (${answer.error}): ${JSON.stringify({ ...req, body: req.body?.length })}\n`);
        continue;
      }
      const label = `${req.target} ${answer.status}`;
      byStatus[label] = (byStatus[label] ?? 0) + 1;
      const problems = violations(req, answer);
      if (problems.length > 0)
        failures.push({
          request: { ...req, body: undefined },
          status: answer.status,
          problems,
          body: answer.body.slice(0, 500),
        });
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, lane));
  return { sent: opts.count, noAnswer, byStatus, failures, ms: Date.now() - started };
}

export interface FuzzStack {
  readonly restPort: number;
  readonly graphqlPort: number;
  readonly key: string;
  /** The `error`/`fatal` log lines the processes wrote so far (they run with LOG_LEVEL=error). */
  errorLines(): string[];
  stop(): Promise<void>;
}

/**
 * Ready when `/readiness` answers 200 several times in a row: with several processes on one port
 * one 200 may come from a process while another is still starting (and would answer the fuzzer 503).
 */
async function waitReady(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  let inARow = 0;
  while (Date.now() < deadline) {
    const ok = await fetch(`http://127.0.0.1:${port}/readiness`, { headers: { connection: 'close' } }).then(
      (r) => r.status === 200,
      () => false,
    );
    inARow = ok ? inARow + 1 : 0;
    if (inARow >= 10) return;
    await new Promise((r) => setTimeout(r, ok ? 20 : 200));
  }
  throw new Error(`port ${port} not ready after ${ms} ms`);
}

/**
 * Starts the real processes (API, GraphQL, one worker) from their entry points on free ports,
 * against `redisUrl` under `prefix`, with a bootstrap admin key the fuzzer uses. The funding
 * wallet's pool gets `fund` UTXOs first, so valid writes are accepted (an empty pool would answer
 * them 503 FUNDING_EXHAUSTED, which is right but not what the fuzzer probes).
 */
export async function startStack(
  redisUrl: string,
  prefix: string,
  fund = 5000,
  redisEnv: Record<string, string> = {},
): Promise<FuzzStack> {
  // One server or a cluster node (asked); `redisEnv` adds what the processes need (REDIS_CLUSTER_NODES).
  const redis = await openRedis({ url: redisUrl }, { maxRetriesPerRequest: 2 });
  try {
    // Into the shards of the partitions the service runs with (resolved as it does when unset).
    const configured = redisEnv['REDIS_PARTITIONS'];
    const { count: partitions } = await resolvePartitions(redis, prefix, configured ? Number(configured) : undefined);
    await fundPool(new FundingPool(redis, { prefix, address: 'fuzz', partitions }), fund, 1000);
  } finally {
    await redis.quit();
  }
  const [restPort, graphqlPort] = [await freePort(), await freePort()];
  const key = `idty_${randomBytes(24)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .padEnd(32, 'x')
    .slice(0, 32)}`;
  const env = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    REDIS_URL: redisUrl,
    ...redisEnv,
    REDIS_PREFIX: prefix,
    PORT: String(restPort),
    GRAPHQL_PORT: String(graphqlPort),
    BOOTSTRAP_API_KEY: key,
    BLOCK_INTERVAL_MS: '1000',
    KEY_CREATE_TIMEOUT_MS: '5000',
    // One API process is started here (several are the launcher's job).
    API_PROCESSES: '1',
  };
  const children: ChildProcess[] = [];
  const errors: string[] = [];
  const errorLines: string[] = [];
  const run = (entry: string) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr?.on('data', (c: Buffer) => errors.push(c.toString()));
    let partial = '';
    child.stdout?.on('data', (c: Buffer) => {
      const text = partial + c.toString('utf8');
      const lines = text.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (/"level":"(error|fatal)"/.test(line)) errorLines.push(line);
    });
    children.push(child);
  };
  run('apps/api/src/main.ts');
  run('apps/graphql/src/main.ts');
  run('apps/worker/src/main.ts');
  try {
    await Promise.all([waitReady(restPort, 90_000), waitReady(graphqlPort, 90_000)]);
  } catch (err) {
    for (const c of children) c.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n${errors.join('')}`);
  }
  return {
    restPort,
    graphqlPort,
    key,
    errorLines: () => [...errorLines],
    stop: async () => {
      agent.destroy();
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null) return resolve();
              const kill = setTimeout(() => c.kill('SIGKILL'), 10_000);
              c.once('exit', () => {
                clearTimeout(kill);
                resolve();
              });
              c.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
