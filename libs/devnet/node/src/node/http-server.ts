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
import type { ArcRealities, ArcStrictness } from './arc-settings';
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
  /** Read on every request (tests change them between requests). */
  readonly strictness: ArcStrictness;
  readonly realities: ArcRealities;
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
  /** When the request arrived (Date.now()): the submission delay counts from here. */
  readonly arrivedAtMs: number;
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
  const options = submitOptions(ctx, req);
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
    if (e instanceof MalformedTransactionError) {
      // ARC: bytes it cannot read as a transaction are a problem of the request (400, no txid).
      if (ctx.strictness.malformedIsBadRequest) throw new BadRequest(400, `cannot read the transaction: ${e.message}`);
      return sendProblem(res, 463, e.message, e.txid, '/v1/tx');
    }
    throw e;
  }
  const outcome = (await submitInOrder(ctx, [sub], options))[0] as AcceptOutcome;
  await submissionDelay(ctx, options);
  if (outcome.kind === 'refused')
    return sendProblem(res, outcome.refusal.code, outcome.refusal.detail, outcome.refusal.txid, '/v1/tx');
  const [record] = await waitForMany(ctx, [outcome.record], options);
  return sendJson(res, 200, successBody(record ?? outcome.record, ctx.clock.now()));
}

async function postTxs(ctx: HttpContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const options = submitOptions(ctx, req);
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
      if (!(e instanceof MalformedTransactionError)) throw e;
      if (ctx.strictness.malformedIsBadRequest) throw new BadRequest(400, `cannot read the transactions: ${e.message}`);
      return sendProblem(res, 463, e.message, null, '/v1/txs');
    }
  } else {
    throw new BadRequest(
      400,
      `unsupported Content-Type "${type}" (application/json, text/plain or application/octet-stream)`,
    );
  }
  if (subs.length === 0) throw new BadRequest(400, 'no transactions in the body');
  // ARC reads the whole request before validating any of it: one unreadable entry fails it all.
  const unreadable = subs.find((sub) => sub instanceof MalformedTransactionError);
  if (unreadable && ctx.strictness.malformedIsBadRequest)
    throw new BadRequest(400, `cannot read a transaction of the request: ${unreadable.message}`);
  const successes: TxStatusRecord[] = [];
  const failures: unknown[] = [];
  // In order (a child later in the batch may spend a parent earlier in it), in one pass.
  const valid = subs.filter((sub): sub is SubmittedTx => !(sub instanceof MalformedTransactionError));
  const outcomes = await submitInOrder(ctx, valid, options);
  await submissionDelay(ctx, options);
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
  const records = await waitForMany(ctx, successes, options);
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
      standardFormatSupported: ctx.strictness.standardFormatSupported,
    },
  });
}

/**
 * Accepts transactions in order in one pass (`NodeChain.acceptInOrder`), registers their
 * callbacks and queues the callbacks their statuses trigger. Does not wait (see {@link waitForMany}).
 */
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
  const outcomes = await ctx.chain.acceptInOrder(subs);
  await afterAccept(ctx, outcomes, options);
  return outcomes;
}

/**
 * What follows the acceptance of a batch: its callback registrations (one read and one write for
 * the batch) and the callbacks their statuses trigger (one enqueue), SEEN_ON_NETWORK queued for
 * when it is reached (the time-to-SEEN reality), the other side of a double spend marked too.
 */
async function afterAccept(
  ctx: HttpContext,
  outcomes: readonly AcceptOutcome[],
  options: SubmitOptions,
): Promise<void> {
  const accepted = outcomes.flatMap((o) => (o.kind === 'refused' ? [] : [o]));
  const alsoChanged = accepted.flatMap((o) => o.alsoChanged ?? []);
  if (alsoChanged.length > 0) await ctx.callbacks.notifyMany(alsoChanged);
  const seenLater = (o: (typeof accepted)[number], regs: readonly CallbackRegistration[]) =>
    o.seenAtMs === undefined
      ? []
      : [{ record: { ...o.record, txStatus: 'SEEN_ON_NETWORK' as const }, regs, dueAtMs: o.seenAtMs }];
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
        if (o.fresh) return [{ record: o.record, regs: r.all }, ...seenLater(o, r.all)];
        return r.isNew ? [{ record: o.record, regs: [reg] }] : [];
      }),
    );
    // A block committed between a transaction's acceptance and its registration queued its
    // callbacks without this one (its MINED, or REJECTED for a double spend it resolved), and it
    // would never be told: ARC stores a callback with its transaction. The statuses are read again
    // after the registration is written, so every interleaving tells it at least once (a block
    // that read the registration too sends it twice: callbacks are at-least-once).
    const fresh = accepted.flatMap((o, i) => {
      const r = regs[i];
      return o.fresh && r && !isBlockStatus(o.record.txStatus) ? [{ txId: o.record.txid, regs: r.all }] : [];
    });
    const now = fresh.length > 0 ? await ctx.chain.statusMany(fresh.map((f) => f.txId)) : [];
    await ctx.callbacks.notifyEach(
      fresh.flatMap((f, i) => {
        const record = now[i];
        return record && isBlockStatus(record.txStatus) ? [{ record, regs: f.regs }] : [];
      }),
    );
  } else {
    await ctx.callbacks.notifyMany(
      accepted.filter((o) => o.fresh && o.record.txStatus !== 'SEEN_ON_NETWORK').map((o) => o.record),
    );
  }
}

/** The statuses a block gives: MINED, and REJECTED for the loser of a double spend it resolved. */
const isBlockStatus = (status: string): boolean => status === 'MINED' || status === 'REJECTED';

/** The submission-delay reality: resolves no earlier than `submitDelayMs` after the request arrived. */
async function submissionDelay(ctx: HttpContext, options: SubmitOptions): Promise<void> {
  const left = options.arrivedAtMs + ctx.realities.submitDelayMs - Date.now();
  if (left > 0) await new Promise((r) => setTimeout(r, left));
}

/**
 * X-WaitFor: the current status of each record (one pipeline per poll), polled until each reaches
 * `waitFor` (or DOUBLE_SPEND_ATTEMPTED or above) or X-MaxTimeout passes; then the status reached
 * so far, as ARC answers a wait that times out.
 */
async function waitForMany(
  ctx: HttpContext,
  records: readonly TxStatusRecord[],
  options: SubmitOptions,
): Promise<TxStatusRecord[]> {
  const wanted = ARC_STATUSES[options.waitFor];
  const done = (r: TxStatusRecord) =>
    ARC_STATUSES[r.txStatus] >= wanted || ARC_STATUSES[r.txStatus] >= ARC_STATUSES.DOUBLE_SPEND_ATTEMPTED;
  const current = [...records];
  // The wait counts from the request's arrival, as ARC's X-MaxTimeout context does.
  const deadline = options.arrivedAtMs + options.maxTimeoutMs;
  let first = ctx.realities.submitDelayMs > 0;
  for (;;) {
    const pending = current.flatMap((r, i) => (done(r) ? [] : [i]));
    // After a submission delay the statuses are read again once even when all are done (a block may have come).
    if (!first && (pending.length === 0 || Date.now() >= deadline)) return current;
    if (!first) await new Promise((r) => setTimeout(r, 50));
    const ids = first ? current.map((_, i) => i) : pending;
    first = false;
    const fresh = await ctx.chain.statusMany(ids.map((i) => (current[i] as TxStatusRecord).txid));
    ids.forEach((i, j) => {
      current[i] = fresh[j] ?? (current[i] as TxStatusRecord);
    });
  }
}

function submitOptions(ctx: HttpContext, req: IncomingMessage): SubmitOptions {
  const arrivedAtMs = Date.now();
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
    // ARC's ValidateCallbackURL: a substring match on the URL as sent.
    const refused = ctx.strictness.rejectCallbackContaining.find((part) => cbUrl.includes(part));
    if (refused !== undefined) throw new BadRequest(400, `X-CallbackUrl is not acceptable (contains "${refused}")`);
    callback = {
      url: parsed.toString(),
      token: header('x-callbacktoken') ?? '',
      batch: header('x-callbackbatch')?.toLowerCase() === 'true',
      full: header('x-fullstatusupdates')?.toLowerCase() === 'true',
    };
  }
  return {
    callback,
    waitFor: (waitForHeader as ArcStatus | undefined) ?? 'SEEN_ON_NETWORK',
    maxTimeoutMs,
    arrivedAtMs,
  };
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
