import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sha256d, toDisplayHex } from '@proofline/chain-domain';
import type { Clock } from '@proofline/shared-config';
import { redisFailureIn, redisUnavailable } from '@proofline/shared-errors';
import type { Logger } from '@proofline/shared-logger';
import { ARC_STATUSES, isArcStatus } from '@proofline/chain-domain';
import type { ArcStatus } from '@proofline/chain-domain';
import { problemBody, successBody } from './arc-protocol';
import type { TxStatusRecord } from './arc-protocol';
import type { CallbackRegistration, Callbacker } from './callbacks';
import type { AcceptOutcome, NodeChain } from './node-chain';
import {
  MalformedTransactionError,
  transactionFromBytes,
  transactionFromHex,
  transactionsFromBytes,
} from './tx-format';
import type { SubmittedTx } from './tx-format';

/** Mutable fault switches for tests (see the README's "Faults"). */
export interface DevnetFaults {
  /** Answer every /v1 call with this HTTP status (e.g. 503), before anything else. */
  arcStatus?: number;
  /** Claim due callbacks and send none. */
  dropCallbacks: boolean;
  /** Send every callback twice. */
  duplicateCallbacks: boolean;
  /** Serve BUMPs (GET, POST answers, callbacks) whose root does not match their block. */
  corruptBump: boolean;
  /** Refuse every submitted transaction with this ARC code and detail; nothing is stored. */
  rejectAll?: { code: number; detail: string };
}

export interface HttpContext {
  readonly chain: NodeChain;
  readonly callbacks: Callbacker;
  readonly faults: DevnetFaults;
  readonly clock: Clock;
  readonly apiKey?: string;
  readonly feeSatoshisPerKb: number;
  readonly logger?: Logger;
}

/**
 * Largest request body accepted: a `/v1/txs` batch of 100 records of the 1 MiB maximum is about
 * 200 MiB as JSON hex. Larger bodies answer 413 (ArcClient treats that as transient: clients
 * should cap a batch by bytes, not only by count).
 */
const MAX_BODY_BYTES = 256 * 1024 * 1024;

class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface SubmitOptions {
  readonly callback: CallbackRegistration | null;
  readonly waitFor: ArcStatus;
  readonly maxTimeoutMs: number;
}

/** The node's request handler (node:http): ARC v1, the WhatsOnChain-shaped reads, liveness. */
export function createHttpHandler(ctx: HttpContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(ctx, req, res).catch((e: unknown) => {
      const redisDown = redisFailureIn(e) !== undefined;
      ctx.logger?.error(
        { err: e, method: req.method, path: req.url?.split('?')[0] },
        redisDown ? 'devnet request failed: Redis unavailable' : 'devnet request failed',
      );
      if (res.headersSent) return void res.destroy();
      // Back-pressure, not a fault of the request: ARC clients retry 503 with backoff.
      if (redisDown) {
        // The one code every interface of the project answers (shared-errors), in ARC's problem shape.
        const unavailable = redisUnavailable(e);
        for (const [name, value] of Object.entries(unavailable.headers)) res.setHeader(name, value);
        return sendJson(
          res,
          503,
          { ...problemBody(503, unavailable.detail), errorCode: unavailable.errorCode },
          'application/problem+json',
        );
      }
      sendJson(res, 500, problemBody(500, 'internal error'), 'application/problem+json');
    });
  };
}

async function handle(ctx: HttpContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://devnet');
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';

  if (path === '/liveness' && (method === 'GET' || method === 'HEAD')) {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(method === 'HEAD' ? undefined : 'Healthy');
    return;
  }

  if (path.startsWith('/v1/')) {
    if (ctx.faults.arcStatus !== undefined) {
      await drain(req);
      if (ctx.faults.arcStatus === 429 || ctx.faults.arcStatus === 503) res.setHeader('Retry-After', '1');
      return sendProblem(
        res,
        ctx.faults.arcStatus,
        `fault injected: every /v1 call answers ${ctx.faults.arcStatus}`,
        null,
        path,
      );
    }
    if (ctx.apiKey !== undefined && !bearerMatches(req.headers.authorization, ctx.apiKey)) {
      await drain(req);
      res.setHeader('WWW-Authenticate', 'Bearer');
      return sendProblem(res, 401, 'missing or wrong Authorization: Bearer <api key>', null, path);
    }
    try {
      if (path === '/v1/tx' && method === 'POST') return await postTx(ctx, req, res);
      if (path === '/v1/txs' && method === 'POST') return await postTxs(ctx, req, res);
      const m = /^\/v1\/tx\/([^/]+)$/.exec(path);
      if (m && method === 'GET') return await getTx(ctx, res, (m[1] as string).toLowerCase(), path);
      if (path === '/v1/policy' && method === 'GET') return policy(ctx, res);
      if (path === '/v1/health' && method === 'GET')
        return sendJson(res, 200, { healthy: true, reason: null, version: 'proofline-devnet' });
    } catch (e) {
      if (e instanceof BadRequest) return sendProblem(res, e.status, e.message, null, path);
      throw e;
    }
    await drain(req);
    return sendProblem(res, 404, `no route ${method} ${path}`, null, path);
  }

  if (method === 'GET') {
    if (path === '/chain/info') {
      const tip = await ctx.chain.chainInfo();
      return sendJson(res, 200, {
        chain: 'regtest',
        blocks: tip?.height ?? 0,
        headers: tip?.height ?? 0,
        bestblockhash: tip?.hash ?? '0'.repeat(64),
        mediantime: tip?.time ?? 0,
        pruned: false,
      });
    }
    // WhatsOnChain's latest headers, newest first (the sdk's WhatsOnChain tracker reads
    // `currentHeight()` from the first entry).
    if (path === '/block/headers') {
      const tip = await ctx.chain.chainInfo();
      const heights = tip ? Array.from({ length: Math.min(10, tip.height + 1) }, (_, i) => tip.height - i) : [];
      const blocks = await Promise.all(heights.map((h) => ctx.chain.blockAt(h)));
      const headers = await Promise.all(blocks.map((b) => (b ? ctx.chain.headerJson(b.hash) : null)));
      return sendJson(
        res,
        200,
        headers.filter((h) => h !== null),
      );
    }
    const header = /^\/block\/(?:hash\/)?([0-9a-fA-F]{64})\/header$/.exec(path);
    if (header) {
      const json = await ctx.chain.headerJson((header[1] as string).toLowerCase());
      return json ? sendJson(res, 200, json) : sendProblem(res, 404, 'unknown block', null, path);
    }
    // WhatsOnChain also answers a height here (the sdk's WhatsOnChain chain tracker asks /block/{height}/header).
    const byHeight = /^\/block\/(\d{1,9})\/header$/.exec(path);
    if (byHeight) {
      const block = await ctx.chain.blockAt(Number(byHeight[1]));
      const json = block ? await ctx.chain.headerJson(block.hash) : null;
      return json ? sendJson(res, 200, json) : sendProblem(res, 404, 'no block at that height', null, path);
    }
    const coinbase = /^\/block\/height\/(\d{1,9})\/coinbase$/.exec(path);
    if (coinbase) {
      const cb = await ctx.chain.coinbaseAt(Number(coinbase[1]));
      return cb ? sendJson(res, 200, cb) : sendProblem(res, 404, 'no block at that height', null, path);
    }
  }
  await drain(req);
  return sendProblem(res, 404, `no route ${method} ${path}`, null, path);
}

// ------------------------------------------------------------------ /v1 routes

async function postTx(ctx: HttpContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const options = submitOptions(req);
  const body = await readBody(req);
  const type = contentType(req);
  let sub: SubmittedTx;
  try {
    if (type === 'application/json') {
      const json = parseJson(body);
      const rawTx = (json as { rawTx?: unknown } | null)?.rawTx;
      if (typeof rawTx !== 'string') throw new BadRequest(400, 'the JSON body must be {"rawTx": "<hex>"}');
      sub = transactionFromHex(rawTx);
    } else if (type === 'text/plain') {
      sub = transactionFromHex(body.toString('utf8'));
    } else if (type === 'application/octet-stream') {
      sub = transactionFromBytes(body);
    } else {
      throw new BadRequest(
        400,
        `unsupported Content-Type "${type}" (application/json, text/plain or application/octet-stream)`,
      );
    }
  } catch (e) {
    if (e instanceof MalformedTransactionError) return sendProblem(res, 463, e.message, e.txid, '/v1/tx');
    throw e;
  }
  const outcome = await submitOne(ctx, sub, options);
  if (outcome.kind === 'refused')
    return sendProblem(res, outcome.refusal.code, outcome.refusal.detail, outcome.refusal.txid, '/v1/tx');
  return sendJson(res, 200, successBody(outcome.record, ctx.clock.now()));
}

async function postTxs(ctx: HttpContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const options = submitOptions(req);
  const body = await readBody(req);
  const type = contentType(req);
  const subs: (SubmittedTx | MalformedTransactionError)[] = [];
  const fromHex = (hex: string) => {
    try {
      subs.push(transactionFromHex(hex));
    } catch (e) {
      if (!(e instanceof MalformedTransactionError)) throw e;
      subs.push(e);
    }
  };
  if (type === 'application/json') {
    const json = parseJson(body);
    if (!Array.isArray(json)) throw new BadRequest(400, 'the JSON body must be an array of {"rawTx": "<hex>"}');
    for (const item of json) {
      const rawTx = (item as { rawTx?: unknown } | null)?.rawTx;
      if (typeof rawTx !== 'string') throw new BadRequest(400, 'every array element must be {"rawTx": "<hex>"}');
      fromHex(rawTx);
    }
  } else if (type === 'text/plain') {
    for (const line of body.toString('utf8').split(/\r?\n/)) if (line.trim()) fromHex(line);
  } else if (type === 'application/octet-stream') {
    try {
      subs.push(...transactionsFromBytes(body));
    } catch (e) {
      if (e instanceof MalformedTransactionError) return sendProblem(res, 463, e.message, null, '/v1/txs');
      throw e;
    }
  } else {
    throw new BadRequest(
      400,
      `unsupported Content-Type "${type}" (application/json, text/plain or application/octet-stream)`,
    );
  }
  if (subs.length === 0) throw new BadRequest(400, 'no transactions in the body');
  const successes: unknown[] = [];
  const failures: unknown[] = [];
  // In order (a child later in the batch may spend a parent earlier in it), in one pass.
  const valid = subs.filter((sub): sub is SubmittedTx => !(sub instanceof MalformedTransactionError));
  const outcomes = await submitInOrder(ctx, valid, { ...options, waitFor: 'SEEN_ON_NETWORK' });
  let next = 0;
  for (const sub of subs) {
    if (sub instanceof MalformedTransactionError) {
      failures.push(problemBody(463, sub.message, sub.txid, '/v1/txs'));
      continue;
    }
    const outcome = outcomes[next++] as AcceptOutcome;
    if (outcome.kind === 'refused')
      failures.push(problemBody(outcome.refusal.code, outcome.refusal.detail, outcome.refusal.txid, '/v1/txs'));
    else successes.push(outcome.record);
  }
  // X-WaitFor for the whole batch, then answer every success's current status.
  const records = await Promise.all(successes.map((r) => waitFor(ctx, r as TxStatusRecord, options)));
  const now = ctx.clock.now();
  // ARC's order (mergeSuccessAndFailResults): successes first, failures appended.
  sendJson(res, 200, [...records.map((r) => successBody(r, now)), ...failures]);
}

async function getTx(ctx: HttpContext, res: ServerResponse, txId: string, path: string): Promise<void> {
  if (!/^[0-9a-f]{64}$/.test(txId)) return sendProblem(res, 400, 'the txid must be 64 hex characters', null, path);
  const record = await ctx.chain.status(txId);
  if (!record) return sendProblem(res, 404, 'transaction not found', txId, path);
  sendJson(res, 200, successBody(record, ctx.clock.now()));
}

function policy(ctx: HttpContext, res: ServerResponse): void {
  sendJson(res, 200, {
    timestamp: ctx.clock.now().toISOString(),
    policy: {
      maxscriptsizepolicy: 500_000_000,
      maxtxsigopscountspolicy: 4_294_967_295,
      maxtxsizepolicy: 10_000_000_000,
      miningFee: { satoshis: ctx.feeSatoshisPerKb, bytes: 1000 },
      standardFormatSupported: true,
    },
  });
}

/** Accepts one transaction, registers its callback, fires the callbacks its status triggers, waits. */
async function submitOne(ctx: HttpContext, sub: SubmittedTx, options: SubmitOptions): Promise<AcceptOutcome> {
  const [outcome] = await submitInOrder(ctx, [sub], options);
  return outcome as AcceptOutcome;
}

/** {@link submitOne} for each transaction, accepted in order in one pass (`NodeChain.acceptInOrder`). */
async function submitInOrder(
  ctx: HttpContext,
  subs: readonly SubmittedTx[],
  options: SubmitOptions,
): Promise<AcceptOutcome[]> {
  const { rejectAll } = ctx.faults;
  if (rejectAll) {
    return subs.map((sub) => ({
      kind: 'refused',
      refusal: {
        code: rejectAll.code,
        detail: rejectAll.detail,
        txid: toDisplayHex(sha256d(Buffer.from(sub.rawHex, 'hex'))),
      },
    }));
  }
  return afterAccept(ctx, await ctx.chain.acceptInOrder(subs), options);
}

/**
 * What follows the acceptance of a batch: its callback registrations (one read and one write for
 * the batch), the callbacks their statuses trigger (one enqueue), X-WaitFor per transaction.
 */
async function afterAccept(
  ctx: HttpContext,
  outcomes: readonly AcceptOutcome[],
  options: SubmitOptions,
): Promise<AcceptOutcome[]> {
  const accepted = outcomes.flatMap((o) => (o.kind === 'refused' ? [] : [o]));
  const reg = options.callback;
  if (reg) {
    const regs = await ctx.callbacks.registerMany(
      accepted.map((o) => o.record.txid),
      reg,
    );
    // A fresh status notifies every registration; a re-submission with a new URL tells only that one.
    await ctx.callbacks.notifyEach(
      accepted.flatMap((o, i) => {
        const r = regs[i];
        if (!r) return [];
        if (o.fresh) return [{ record: o.record, regs: r.all }];
        return r.isNew ? [{ record: o.record, regs: [reg] }] : [];
      }),
    );
  } else {
    await ctx.callbacks.notifyMany(
      accepted.filter((o) => o.fresh && o.record.txStatus !== 'SEEN_ON_NETWORK').map((o) => o.record),
    );
  }
  return Promise.all(
    outcomes.map(async (o) => (o.kind === 'refused' ? o : { ...o, record: await waitFor(ctx, o.record, options) })),
  );
}

/** X-WaitFor: polls the status until it reaches `waitFor` (or a final status) or X-MaxTimeout passes. */
async function waitFor(ctx: HttpContext, record: TxStatusRecord, options: SubmitOptions): Promise<TxStatusRecord> {
  const wanted = ARC_STATUSES[options.waitFor];
  let current = record;
  const deadline = Date.now() + options.maxTimeoutMs;
  while (
    ARC_STATUSES[current.txStatus] < wanted &&
    current.txStatus !== 'DOUBLE_SPEND_ATTEMPTED' &&
    Date.now() < deadline
  ) {
    await new Promise((r) => setTimeout(r, 50));
    current = (await ctx.chain.status(current.txid)) ?? current;
  }
  return current;
}

function submitOptions(req: IncomingMessage): SubmitOptions {
  const header = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const maxTimeout = header('x-maxtimeout');
  let maxTimeoutMs = 5000;
  if (maxTimeout !== undefined) {
    const n = Number(maxTimeout);
    if (!/^\d+$/.test(maxTimeout.trim()) || n < 1 || n > 30)
      throw new BadRequest(400, 'X-MaxTimeout must be a whole number of seconds from 1 to 30');
    maxTimeoutMs = n * 1000;
  }
  const waitForHeader = header('x-waitfor')?.trim().toUpperCase();
  if (waitForHeader !== undefined && !isArcStatus(waitForHeader))
    throw new BadRequest(400, `X-WaitFor names no ARC status: ${waitForHeader.slice(0, 40)}`);
  const cbUrl = header('x-callbackurl');
  let callback: CallbackRegistration | null = null;
  if (cbUrl !== undefined && cbUrl !== '') {
    let parsed: URL;
    try {
      parsed = new URL(cbUrl);
    } catch {
      throw new BadRequest(400, 'X-CallbackUrl is not a URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new BadRequest(400, 'X-CallbackUrl must be http(s)');
    callback = {
      url: parsed.toString(),
      token: header('x-callbacktoken') ?? '',
      batch: header('x-callbackbatch')?.toLowerCase() === 'true',
      full: header('x-fullstatusupdates')?.toLowerCase() === 'true',
    };
  }
  return { callback, waitFor: (waitForHeader as ArcStatus | undefined) ?? 'SEEN_ON_NETWORK', maxTimeoutMs };
}

// ------------------------------------------------------------------ plumbing

function bearerMatches(header: string | undefined, apiKey: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const given = Buffer.from((m[1] as string).trim());
  const want = Buffer.from(apiKey);
  return given.length === want.length && timingSafeEqual(given, want);
}

function contentType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new BadRequest(400, 'the body is not valid JSON');
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(c);
    });
    req.on('end', () =>
      tooLarge
        ? reject(new BadRequest(413, `the body exceeds ${MAX_BODY_BYTES} bytes`))
        : resolve(Buffer.concat(chunks)),
    );
    req.on('error', reject);
  });
}

async function drain(req: IncomingMessage): Promise<void> {
  if (req.readableEnded) return;
  await new Promise<void>((resolve) => {
    req.on('end', resolve);
    req.on('error', () => resolve());
    req.resume();
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': `${type}; charset=utf-8`, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function sendProblem(
  res: ServerResponse,
  status: number,
  detail: string,
  txid: string | null,
  instance: string | null,
): void {
  sendJson(res, status, problemBody(status, detail, txid, instance), 'application/problem+json');
}
