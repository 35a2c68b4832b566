/**
 * `npm run bench:realities`: issue 19's "Done when" load. The compiled service as users run it
 * against an external ARC (the launcher, with ARC_URL, HEADERS_URL and ARC callbacks set), the
 * ARC being the devnet node (dist/apps/devnet) with ARC's strict behaviours and every reality on:
 *
 *   DEVNET_STRICT=true             460 for raw transactions whose parents are not stored, EF orphans
 *                                  held, ARC's callback rules (batches of 500, no retry on a network error)
 *   DEVNET_STANDARD_FORMAT=false   460 for every raw transaction: only Extended Format passes
 *   DEVNET_SUBMIT_DELAY_MS=1000    every POST /v1/tx(s) answered 1 s after it arrived
 *   DEVNET_TIME_TO_SEEN_MS=1500    ACCEPTED_BY_NETWORK (DEVNET_STATUS_BEFORE_SEEN) for 1.5 s, then SEEN_ON_NETWORK
 *   DEVNET_DOUBLE_SPEND_MARKS_BOTH=true
 *
 * (DEVNET_REJECT_CALLBACK_CONTAINING stays empty: ARC's example list refuses localhost callbacks,
 * and every callback here goes to localhost; a wrong ARC_CALLBACK_URL is a spec of its own.)
 *
 * Between the service and the node, pass-through proxies in this process count every ARC answer
 * (HTTP status, each transaction's txStatus or problem code) and every callback ARC sends the API
 * (its txStatus, the API's answer). The load, for BENCH_SECONDS: BENCH_WRITERS
 * clients writing independent records (SHA256 of 64 random bytes) and BENCH_CHAINS clients each
 * updating a linked chain as fast as answers come (the next update as soon as the previous one
 * was accepted; a new chain after BENCH_CHAIN_VERSIONS versions, 0 = one chain for the whole run).
 * A 409 or 503 is retried after its Retry-After, at most BENCH_RETRY_AFTER_MAX_S; an update refused
 * 409 NOT_LINKED_RECORDS_END (one answered 5xx was stored after all) follows its chain to the end
 * and checks the versions found there like the others. Then it waits
 * (at most BENCH_DRAIN_SECONDS) until every accepted record has a stored proof, reads every record's
 * status through the REST API, and prints: records accepted per second, accept → proof times, the
 * final states, chain lengths and order, the API's 409/503/Retry-After answers, ARC's answers, the
 * service's warnings and the funding pool. Exits 1 when a record failed or never got its proof
 * (the service's and the node's logs are then kept, as with BENCH_KEEP_LOGS=1).
 *
 * Environment: BENCH_SECONDS (60), BENCH_WRITERS (16), BENCH_CHAINS (8), BENCH_CHAIN_VERSIONS (0),
 * BENCH_RETRY_AFTER_MAX_S (5), BENCH_DRAIN_SECONDS (300), WORKERS (2), BLOCK_INTERVAL_MS (1000),
 * and any variable of the service or the node (DEVNET_*, ARC_*, POOL_*), which win over these defaults.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ArcProofStore } from '@proofline/chain-arc';
import { FundingPool, fundingIdentity } from '@proofline/chain-wallet';
import { DEVNET_WALLET_SEED } from '@proofline/shared-config';
import { createRedis } from '@proofline/shared-redis';
import { freePort } from '@proofline/shared-testing';
import { newApiKey, pct, request, stopProcess, waitFor } from './stack-client';
import type { Reply } from './stack-client';

const ROOT = path.resolve(__dirname, '..');
const env = (name: string, fallback: string): string => process.env[name] ?? fallback;
const SECONDS = Number(env('BENCH_SECONDS', '60'));
const WRITERS = Number(env('BENCH_WRITERS', '16'));
const CHAINS = Number(env('BENCH_CHAINS', '8'));
const CHAIN_VERSIONS = Number(env('BENCH_CHAIN_VERSIONS', '0'));
const RETRY_AFTER_MAX_S = Number(env('BENCH_RETRY_AFTER_MAX_S', '5'));
const DRAIN_SECONDS = Number(env('BENCH_DRAIN_SECONDS', '300'));
const PREFIX = env('REDIS_PREFIX', 'bench');

/** ARC's strictness and every reality of the devnet node (libs/devnet/README.md, "Strictness and realities"). */
const REALITIES: Record<string, string> = {
  DEVNET_STRICT: env('DEVNET_STRICT', 'true'),
  DEVNET_STANDARD_FORMAT: env('DEVNET_STANDARD_FORMAT', 'false'),
  DEVNET_SUBMIT_DELAY_MS: env('DEVNET_SUBMIT_DELAY_MS', '1000'),
  DEVNET_TIME_TO_SEEN_MS: env('DEVNET_TIME_TO_SEEN_MS', '1500'),
  DEVNET_STATUS_BEFORE_SEEN: env('DEVNET_STATUS_BEFORE_SEEN', 'ACCEPTED_BY_NETWORK'),
  DEVNET_DOUBLE_SPEND_MARKS_BOTH: env('DEVNET_DOUBLE_SPEND_MARKS_BOTH', 'true'),
};

const agent = new http.Agent({ keepAlive: true, maxSockets: WRITERS + CHAINS + 16 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);

interface Written {
  readonly txId: string;
  readonly kind: 'independent' | 'linked';
  /** Chain number and version (0 = the create) of a linked record. */
  readonly chain?: number;
  readonly version?: number;
  /** ms (Date.now()) the API answered 200; NaN for an update answered 5xx though stored (found on its chain). */
  readonly acceptedAt: number;
  readonly unacknowledged?: boolean;
  provenAt?: number;
  height?: number;
}

interface Stack {
  readonly api: string;
  readonly key: string;
  readonly redisUrl: string;
  readonly logDir: string;
  readonly arc: ArcCounts;
  stop(): Promise<void>;
}

/** What ARC answered the service and what it called back, counted by the proxies. */
interface ArcCounts {
  /** `POST /v1/tx(s)` and `GET /v1/tx/{id}` requests by HTTP status. */
  readonly requests: Map<string, number>;
  /** Per transaction of a submission: its txStatus, or the problem's status (460, 465, …). */
  readonly submitted: Map<string, number>;
  /** Per status query: its txStatus, or the HTTP status (404). */
  readonly polled: Map<string, number>;
  /** ms (Date.now()) ARC first answered a submission of each txid. */
  readonly answeredAt: Map<string, number>;
  /** Callback POSTs by the API's answer, and the callbacks they carried by txStatus. */
  readonly callbackPosts: Map<string, number>;
  readonly callbacks: Map<string, number>;
  /** ms the API first answered 200 to a MINED callback of each txid. */
  readonly minedCallbackAt: Map<string, number>;
}

function redisServer(dir: string, port: number): ChildProcess {
  return spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
}

/** ARC's answer entries and callback items share these fields. */
interface TxEntry {
  readonly txid?: string;
  readonly txStatus?: string;
  readonly status?: number;
}

/** The entries of a JSON body: an array, a batch of callbacks (`{callbacks}`), or one object. */
function entriesOf(body: Buffer): TxEntry[] | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    if (Array.isArray(parsed)) return parsed as TxEntry[];
    const batch = (parsed as { callbacks?: TxEntry[] }).callbacks;
    return batch ?? [parsed as TxEntry];
  } catch {
    return null;
  }
}

/**
 * A pass-through HTTP proxy to `target`. For the requests `observe` picks, it hands the request
 * and answer bodies to `seen` once the answer is sent; every other body streams through untouched.
 */
async function observingProxy(
  target: string,
  observe: (method: string, route: string) => boolean,
  seen: (route: string, request: Buffer, status: number, answer: Buffer) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const forwardAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((req, res) => {
    const route = req.url ?? '/';
    const watched = observe(req.method ?? 'GET', route);
    const sent: Buffer[] = [];
    if (watched) req.on('data', (c: Buffer) => sent.push(c));
    const out = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: route,
        headers: req.headers,
        agent: forwardAgent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (!watched) {
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          res.end(body);
          seen(route, Buffer.concat(sent), answer.statusCode ?? 0, body);
        });
      },
    );
    out.on('error', (e) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(e));
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      forwardAgent.destroy();
    },
  };
}

/** The proxy in front of ARC: counts its answers to submissions and status queries. */
function arcProxy(target: string, counts: ArcCounts) {
  const submitRoute = (method: string, route: string) =>
    method === 'POST' && (route === '/v1/tx' || route === '/v1/txs');
  return observingProxy(
    target,
    (method, route) => submitRoute(method, route) || (method === 'GET' && route.startsWith('/v1/tx/')),
    (route, _request, status, answer) => {
      const submit = !route.startsWith('/v1/tx/');
      count(counts.requests, `${submit ? `POST ${route}` : 'GET /v1/tx/{id}'} ${status}`);
      const now = Date.now();
      for (const e of entriesOf(answer) ?? [{ status: -1 }]) {
        count(submit ? counts.submitted : counts.polled, e.txStatus ?? String(e.status ?? status));
        if (submit && e.txid && !counts.answeredAt.has(e.txid)) counts.answeredAt.set(e.txid, now);
      }
    },
  );
}

/** The proxy in front of the API's callback route: counts ARC's callbacks and the API's answers. */
function callbackProxy(target: string, counts: ArcCounts) {
  return observingProxy(
    target,
    (method) => method === 'POST',
    (_route, request, status) => {
      count(counts.callbackPosts, String(status));
      const now = Date.now();
      for (const e of entriesOf(request) ?? []) {
        count(counts.callbacks, e.txStatus ?? '?');
        if (status === 200 && e.txStatus === 'MINED' && e.txid && !counts.minedCallbackAt.has(e.txid))
          counts.minedCallbackAt.set(e.txid, now);
      }
    },
  );
}

/**
 * Two redis-servers (the service's, the node's), the devnet node with its realities, the counting
 * proxy, and the launcher running the API, GraphQL and WORKERS workers with ARC_URL at the proxy.
 */
async function startStack(): Promise<Stack> {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-realities-'));
  const [redisPort, devnetRedisPort, devnetPort, apiPort, graphqlPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const redis = redisServer(logDir, redisPort);
  const devnetRedis = redisServer(logDir, devnetRedisPort);
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const key = newApiKey();
  const devnetUrl = `http://127.0.0.1:${devnetPort}`;
  const common: NodeJS.ProcessEnv = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    REDIS_URL: redisUrl,
    REDIS_PREFIX: PREFIX,
    BLOCK_INTERVAL_MS: '1000',
    WORKERS: '2',
    POOL_LOW_WATER: '10000',
    POOL_TARGET: '20000',
    AUTH_JWT_SECRET: randomBytes(32).toString('hex'),
    ...process.env,
  };
  await sleep(300);
  const devnet = spawn(process.execPath, [path.join(ROOT, 'dist', 'apps', 'devnet', 'main.js')], {
    cwd: ROOT,
    env: {
      ...common,
      ...REALITIES,
      DEVNET_PORT: String(devnetPort),
      DEVNET_REDIS_URL: `redis://127.0.0.1:${devnetRedisPort}`,
    },
    stdio: [
      'ignore',
      fs.openSync(path.join(logDir, 'devnet.log'), 'a'),
      fs.openSync(path.join(logDir, 'devnet.log'), 'a'),
    ],
  });
  await waitFor(async () => (await fetch(`${devnetUrl}/liveness`)).ok, 30_000, 'the devnet node');
  const counts: ArcCounts = {
    requests: new Map(),
    submitted: new Map(),
    polled: new Map(),
    answeredAt: new Map(),
    callbackPosts: new Map(),
    callbacks: new Map(),
    minedCallbackAt: new Map(),
  };
  const proxy = await arcProxy(devnetUrl, counts);
  const callbacks = await callbackProxy(`http://127.0.0.1:${apiPort}`, counts);
  const launcherLog = fs.openSync(path.join(logDir, 'service.log'), 'a');
  const launcher = spawn(process.execPath, [path.join(ROOT, 'dist', 'apps', 'launcher', 'main.js')], {
    cwd: ROOT,
    env: {
      ...common,
      PORT: String(apiPort),
      GRAPHQL_PORT: String(graphqlPort),
      BOOTSTRAP_API_KEY: key,
      ARC_URL: proxy.url,
      HEADERS_URL: devnetUrl,
      ARC_CALLBACK_URL: `${callbacks.url}/arc/callback`,
      ARC_CALLBACK_TOKEN: randomBytes(24).toString('hex'),
    },
    stdio: ['ignore', launcherLog, launcherLog],
  });
  const api = `http://127.0.0.1:${apiPort}`;
  await waitFor(async () => (await fetch(`${api}/readiness`)).ok, 120_000, 'the service to be ready');
  return {
    api,
    key,
    redisUrl,
    logDir,
    arc: counts,
    stop: async () => {
      await stopProcess(launcher, 30_000);
      await Promise.all([proxy.close(), callbacks.close()]);
      await stopProcess(devnet, 10_000);
      await Promise.all([stopProcess(redis, 5000), stopProcess(devnetRedis, 5000)]);
    },
  };
}

/** The API's answers other than 200, by status and errorCode, and the Retry-After headers among them. */
interface Refusals {
  readonly byCode: Map<string, number>;
  retryAfter: number;
}

/** Waits what a refusal's Retry-After asks (capped), after counting it; throws on an answer a writer cannot retry. */
async function backOff(res: Reply, refusals: Refusals, what: string): Promise<void> {
  let code = '';
  try {
    code = (JSON.parse(res.body) as { errorCode?: string }).errorCode ?? '';
  } catch {
    code = 'unreadable';
  }
  count(refusals.byCode, `${res.status} ${code}`);
  const after = res.headers['retry-after'];
  if (after !== undefined) refusals.retryAfter += 1;
  if (res.status !== 409 && res.status !== 503 && res.status !== 429)
    throw new Error(`${what}: ${res.status} ${res.body.slice(0, 300)}`);
  await sleep(Math.min(Number(after ?? 1), RETRY_AFTER_MAX_S) * 1000);
}

async function runLoad(
  stack: Stack,
  written: Written[],
  refusals: Refusals,
): Promise<{ startedAt: number; seconds: number }> {
  const until = Date.now() + SECONDS * 1000;
  const started = Date.now();
  const independent = Array.from({ length: WRITERS }, async () => {
    while (Date.now() < until) {
      const res = await request(agent, stack.api, 'POST', '/api/v1/records?encode=SHA256', stack.key, randomBytes(64));
      if (res.status === 200)
        written.push({
          txId: (JSON.parse(res.body) as { txId: string }).txId,
          kind: 'independent',
          acceptedAt: Date.now(),
        });
      else await backOff(res, refusals, 'independent write');
    }
  });
  let chainNumber = 0;
  const linked = Array.from({ length: CHAINS }, async () => {
    while (Date.now() < until) {
      const chain = chainNumber++;
      // The token is omitted once the end was found by navigating: the tenant's Issuer key may update without it.
      let end: { txId: string; updateToken?: string } | null = null;
      for (let version = 0; Date.now() < until && (CHAIN_VERSIONS === 0 || version < CHAIN_VERSIONS);) {
        const body = Buffer.from(`chain ${chain} version ${version} ${randomBytes(8).toString('hex')}`);
        const token = end?.updateToken ? `?updateToken=${encodeURIComponent(end.updateToken)}` : '';
        const res = end
          ? await request(agent, stack.api, 'POST', `/api/v1/linkedrecords/${end.txId}/update${token}`, stack.key, body)
          : await request(agent, stack.api, 'POST', '/api/v1/linkedrecords', stack.key, body);
        if (res.status === 200) {
          end = JSON.parse(res.body) as { txId: string; updateToken: string };
          written.push({ txId: end.txId, kind: 'linked', chain, version, acceptedAt: Date.now() });
          version += 1;
          continue;
        }
        await backOff(res, refusals, `chain ${chain} version ${version}`);
        if (end && res.status === 409 && res.body.includes('NOT_LINKED_RECORDS_END')) {
          // An update answered 5xx was stored after all: its successors are found on the chain,
          // checked like the others (not timed: their accept time is unknown), and the chain goes on from its end.
          for (const txId of await successorsOf(stack, end.txId)) {
            written.push({ txId, kind: 'linked', chain, version, acceptedAt: NaN, unacknowledged: true });
            version += 1;
            end = { txId };
          }
        }
      }
    }
  });
  await Promise.all([...independent, ...linked]);
  return { startedAt: started, seconds: (Date.now() - started) / 1000 };
}

/** The records after `txId` on its chain, in order (GET …/navigate). */
async function successorsOf(stack: Stack, txId: string): Promise<string[]> {
  const found: string[] = [];
  for (let at = txId; ;) {
    const res = await request(agent, stack.api, 'GET', `/api/v1/linkedrecords/${at}/navigate?links=100`, stack.key);
    const page = JSON.parse(res.body) as { txIds?: string[]; endOfLinks?: boolean };
    if (res.status !== 200 || !page.txIds)
      throw new Error(`navigate from ${at}: ${res.status} ${res.body.slice(0, 200)}`);
    found.push(...page.txIds);
    if (page.endOfLinks || page.txIds.length === 0) return found;
    at = page.txIds[page.txIds.length - 1] as string;
  }
}

/** Marks each written record proven once the proof store holds its verified proof (polled every 250 ms). */
function watchProofs(proofs: ArcProofStore, written: readonly Written[]): { stop(): Promise<void> } {
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const open = written.filter((w) => w.provenAt === undefined);
      for (let i = 0; i < open.length; i += 1000) {
        const part = open.slice(i, i + 1000);
        const found = await proofs.inclusions(part.map((w) => w.txId));
        const now = Date.now();
        found.forEach((inc, j) => {
          const w = part[j] as Written;
          if (inc?.proof) {
            w.provenAt = now;
            w.height = inc.blockHeight;
          }
        });
      }
      await sleep(250);
    }
  })();
  return {
    stop: async () => {
      stopping = true;
      await loop;
    },
  };
}

/** Every record's status through the REST API: confirmed (a Merkle proof naming it), failed, or still pending. */
async function finalStates(stack: Stack, written: readonly Written[]): Promise<Map<string, string[]>> {
  const byState = new Map<string, string[]>();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < written.length) {
        const w = written[next++] as Written;
        const family = w.kind === 'linked' ? 'linkedrecords' : 'records';
        const res = await request(agent, stack.api, 'GET', `/api/v1/${family}/${w.txId}/status`, stack.key);
        const s = JSON.parse(res.body) as {
          publication?: string;
          failure?: string;
          confirmation: { merkleProof?: { txOrId?: string } } | null;
        };
        const state =
          s.confirmation?.merkleProof?.txOrId === w.txId
            ? 'confirmed'
            : s.publication === 'failed'
              ? `failed (${(s.failure ?? '').slice(0, 80)})`
              : `pending (${s.publication ?? res.status})`;
        byState.set(state, [...(byState.get(state) ?? []), w.txId]);
      }
    }),
  );
  return byState;
}

/** Warnings and errors of the service's processes, by message (pino JSON lines), most frequent first. */
function loggedProblems(file: string): [string, number][] {
  const counts = new Map<string, number>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{')) {
      if (line.trim()) count(counts, `(not JSON) ${line.slice(0, 100)}`);
      continue;
    }
    try {
      const l = JSON.parse(line) as { level?: number | string; msg?: string; name?: string };
      if (typeof l.level === 'number' ? l.level >= 40 : l.level !== 'info')
        count(counts, `${l.name ?? '?'}: ${(l.msg ?? '').slice(0, 140)}`);
    } catch {
      count(counts, `(unparsable) ${line.slice(0, 100)}`);
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1]);
}

const fmt = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';
const ms = (v: number) => (Number.isFinite(v) ? `${(v / 1000).toFixed(1)} s` : 'n/a');

async function main(): Promise<void> {
  const loadBefore = os.loadavg()[0] ?? NaN;
  const stack = await startStack();
  const redis = createRedis(stack.redisUrl, { maxRetriesPerRequest: 2 });
  const lines: string[] = [];
  const say = (l: string) => {
    lines.push(l);
    console.log(l);
  };
  let ok = false;
  try {
    const pool = new FundingPool(redis, {
      prefix: PREFIX,
      address: fundingIdentity(env('WALLET_SEED', DEVNET_WALLET_SEED), 'devnet').address,
    });
    const lowWater = Number(env('POOL_LOW_WATER', '10000'));
    // The wallet worker funds the pool from the node's coinbases: the load starts on a warm pool.
    await waitFor(
      async () => (await pool.denominatedCount(Number(env('POOL_UTXO_SATS', '1000')))) >= lowWater,
      180_000,
      'a funded pool',
    );
    const proofs = new ArcProofStore(redis, PREFIX);
    const written: Written[] = [];
    const refusals: Refusals = { byCode: new Map(), retryAfter: 0 };
    const watcher = watchProofs(proofs, written);
    const load = await runLoad(stack, written, refusals);
    const drainStart = Date.now();
    while (Date.now() - drainStart < DRAIN_SECONDS * 1000 && written.some((w) => w.provenAt === undefined)) {
      await sleep(1000);
      if ((Date.now() - drainStart) % 15_000 < 1000)
        console.log(`  waiting for proofs: ${written.filter((w) => w.provenAt === undefined).length} left`);
    }
    const drained = (Date.now() - drainStart) / 1000;
    await watcher.stop();
    const states = await finalStates(stack, written);

    const independent = written.filter((w) => w.kind === 'independent').length;
    const chains = new Map<number, Written[]>();
    for (const w of written)
      if (w.kind === 'linked') chains.set(w.chain as number, [...(chains.get(w.chain as number) ?? []), w]);
    const lengths = [...chains.values()].map((c) => c.length).sort((a, b) => a - b);
    const inOrder = [...chains.values()].filter((c) => {
      const sorted = [...c].sort((a, b) => (a.version as number) - (b.version as number));
      return sorted.every(
        (w, i) => w.height !== undefined && (i === 0 || (sorted[i - 1]?.height ?? Infinity) <= w.height),
      );
    }).length;
    // Durations; an unacknowledged record (accept time unknown) gives NaN and is left out.
    const sortedMs = (values: (number | undefined)[]) =>
      values.filter((v): v is number => v !== undefined && Number.isFinite(v)).sort((a, b) => a - b);
    const toProof = sortedMs(written.map((w) => (w.provenAt === undefined ? undefined : w.provenAt - w.acceptedAt)));
    const acknowledged = written.filter((w) => !w.unacknowledged).length;
    const toAnswer = sortedMs(
      written.map((w) => {
        const at = stack.arc.answeredAt.get(w.txId);
        return at === undefined ? undefined : at - w.acceptedAt;
      }),
    );
    const answerToProof = sortedMs(
      written.map((w) => {
        const at = stack.arc.answeredAt.get(w.txId);
        return at === undefined || w.provenAt === undefined ? undefined : w.provenAt - at;
      }),
    );
    const withCallback = written.filter((w) => stack.arc.minedCallbackAt.has(w.txId)).length;
    const callbackToProof = sortedMs(
      written.map((w) => {
        const at = stack.arc.minedCallbackAt.get(w.txId);
        return at === undefined || w.provenAt === undefined ? undefined : w.provenAt - at;
      }),
    );
    const spread = (v: number[]) => `p50 ${ms(pct(v, 50))}, p95 ${ms(pct(v, 95))}, max ${ms(v[v.length - 1] ?? NaN)}`;
    const lastAnswer = written.reduce((last, w) => Math.max(last, stack.arc.answeredAt.get(w.txId) ?? NaN), 0);
    const confirmed = states.get('confirmed')?.length ?? 0;
    const failed = [...states].filter(([s]) => s.startsWith('failed')).reduce((n, [, t]) => n + t.length, 0);
    const pending = written.length - confirmed - failed;
    const poolStatus = await pool.status();

    say(
      `arc realities load: ${SECONDS} s, ${WRITERS} independent writers, ${CHAINS} chain writers (${CHAIN_VERSIONS || 'unbounded'} versions a chain), ` +
        `WORKERS=${env('WORKERS', '2')}, BLOCK_INTERVAL_MS=${env('BLOCK_INTERVAL_MS', '1000')}, ARC_WAIT_FOR=${env('ARC_WAIT_FOR', 'STORED')}; ` +
        `node: ${Object.entries(REALITIES)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
    );
    say(
      `accepted: ${acknowledged} records in ${load.seconds.toFixed(1)} s = ${(acknowledged / load.seconds).toFixed(0)} records/s ` +
        `(${independent} independent, ${acknowledged - independent} linked in ${chains.size} chains` +
        `${written.length > acknowledged ? `; updates answered 5xx but found stored on their chains: ${written.length - acknowledged}` : ''}); ` +
        `published (ARC answered each): the last ${ms(lastAnswer - load.startedAt)} after the load began = ` +
        `${(written.length / ((lastAnswer - load.startedAt) / 1000)).toFixed(0)} records/s`,
    );
    say(
      `accept -> proof: ${spread(toProof)} over ${toProof.length} records; the last proof ${drained.toFixed(0)} s after the load ` +
        `(accept -> ARC's first answer: ${spread(toAnswer)}; that answer -> proof: ${spread(answerToProof)}; ` +
        `${withCallback} proven by a MINED callback the API took, that callback -> proof: ${spread(callbackToProof)})`,
    );
    say(
      `final states (REST status): confirmed ${confirmed}, failed ${failed}, still pending ${pending}` +
        [...states]
          .filter(([s]) => s !== 'confirmed')
          .map(([s, t]) => `; ${s}: ${t.length} (e.g. ${t[0]})`)
          .join(''),
    );
    say(
      `chains: lengths min ${lengths[0] ?? 0}, median ${pct(lengths, 50) || 0}, max ${lengths[lengths.length - 1] ?? 0}; ` +
        `${inOrder} of ${chains.size} confirmed completely, in order (block heights never decreasing along the chain)`,
    );
    say(`API refusals: ${fmt(refusals.byCode)}; Retry-After headers ${refusals.retryAfter}`);
    say(`ARC requests: ${fmt(stack.arc.requests)}`);
    say(`ARC answers per submitted transaction: ${fmt(stack.arc.submitted)}`);
    say(`ARC answers per status query: ${fmt(stack.arc.polled)}`);
    say(
      `ARC callbacks: POSTs by the API's answer ${fmt(stack.arc.callbackPosts)}; callbacks ${fmt(stack.arc.callbacks)}`,
    );
    say(
      `funding pool after: free ${poolStatus.free.count}, leased ${poolStatus.leased.count}, pending ${poolStatus.pending.count}, ` +
        `spent unconfirmed ${poolStatus.spentUnconfirmed.count}, unsettled transactions ${poolStatus.unsettledTransactions}`,
    );
    const problems = loggedProblems(path.join(stack.logDir, 'service.log'));
    say(
      `machine: ${os.cpus().length} cores, load average ${loadBefore.toFixed(1)} before, ${(os.loadavg()[0] ?? NaN).toFixed(1)} after`,
    );
    say(`service warnings: ${problems.length === 0 ? 'none' : problems.map(([m, n]) => `${n}× ${m}`).join(' | ')}`);
    ok = failed === 0 && pending === 0 && inOrder === chains.size;
    if (!ok)
      say(
        `NOT DONE: ${failed} failed, ${pending} without a proof, ${chains.size - inOrder} chains not confirmed in order`,
      );
  } finally {
    agent.destroy();
    await redis.quit().catch(() => undefined);
    await stack.stop();
    if (ok && !process.env['BENCH_KEEP_LOGS']) fs.rmSync(stack.logDir, { recursive: true, force: true });
    else console.log(`logs kept in ${stack.logDir}`);
  }
  process.exit(ok ? 0 : 1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
