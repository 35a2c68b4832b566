import { z } from 'zod';
import { blockHash as hashOfHeader, headerFromFields, isHashHex, serializeHeader } from '@proofline/chain-domain';
import type { ChainHeader, ChainTipInfo, HeadersSource } from '@proofline/chain-domain';
import { AppError } from '@proofline/shared-errors';

/** The headers source could not be reached or answered something unusable; retry later. */
export class HeadersSourceError extends AppError {
  constructor(
    detail: string,
    readonly upstreamStatus?: number,
    cause?: unknown,
  ) {
    super({
      errorCode: 'HEADERS_UNAVAILABLE',
      httpStatus: 503,
      detail: `headers source: ${detail}`,
      retryable: true,
      cause,
      headers: { 'Retry-After': '5' },
    });
  }
}

export interface WocHeadersClientOptions {
  /** Base URL, e.g. `https://api.whatsonchain.com/v1/bsv/main` or the devnet's `http://127.0.0.1:9090`. */
  readonly url: string;
  /** Deadline of each call, waiting for a request slot or a back-off included. */
  readonly timeoutMs: number;
  /**
   * WhatsOnChain API key (`HEADERS_API_KEY`), sent bare as `Authorization: <key>`, exactly as
   * `@bsv/sdk`'s `WhatsOnChain` chain tracker sends it (not `Bearer`). A secret: it MUST NOT
   * appear in errors, logs or an inspected client.
   */
  readonly apiKey?: string;
  /**
   * Requests per second to this source (`HEADERS_MAX_RPS`), shared by every client of the same
   * base URL in the process; requests are spaced `1000 / maxRps` ms apart (`Infinity`: no
   * budget, the back-off on 429 still applies). Default 2.
   */
  readonly maxRps?: number;
  /** Headers kept by hash (least recently used evicted). Default 10 000 (~3 MB). */
  readonly cacheSize?: number;
  /**
   * How old a tip may be for a cached header's confirmations to be derived from it instead of
   * asking the source. Default 2000 ms.
   */
  readonly tipMaxAgeMs?: number;
  /** Warned on 429 back-offs (never with the key). */
  readonly logger?: HeadersLogger;
}

/** The little of a logger the client uses (pino's Logger fits). */
export interface HeadersLogger {
  warn(obj: object, msg: string): void;
}

/** WhatsOnChain's keyless plan allows about 3 requests/s; the default stays below it. */
const DEFAULT_HEADERS_MAX_RPS = 2;
const DEFAULT_CACHE_SIZE = 10_000;
const DEFAULT_TIP_MAX_AGE_MS = 2000;
/** First back-off after a 429 without `Retry-After`, doubled on each 429 in a row up to the cap. */
const BACKOFF_BASE_MS = 1000;
const BACKOFF_CAP_MS = 30_000;
/** A `Retry-After: 0` MUST NOT turn the retry into a tight loop. */
const RETRY_AFTER_FLOOR_MS = 250;
/** A `Retry-After` beyond this is taken as this (a misconfigured source MUST NOT stop proofs for hours). */
const RETRY_AFTER_CAP_MS = 600_000;
/** How far below the tip a cached header's main-chain membership is derived by walking `prevHash` links. */
const MAX_WALK = 64;

const chainInfo = z.object({ blocks: z.number().int().nonnegative(), bestblockhash: z.string() });
const headerJson = z.object({
  hash: z.string(),
  height: z.number().int().nonnegative(),
  confirmations: z.number().int(),
  version: z.number().int(),
  merkleroot: z.string(),
  time: z.number().int(),
  nonce: z.number().int(),
  // WhatsOnChain may give the compact target as a number; the devnet gives 8 hex digits.
  bits: z.union([
    z.string(),
    z
      .number()
      .int()
      .min(0)
      .max(0xffffffff)
      .transform((n) => n.toString(16).padStart(8, '0')),
  ]),
  previousblockhash: z.string().nullish(),
});

/** A header's bytes, height and parent never change for its hash; only its main-chain membership does. */
interface CachedHeader {
  readonly headerHex: string;
  readonly height: number;
  readonly prevHash: string;
}

/**
 * The request budget and the 429 back-off of one headers source, per process: every client of
 * the same base URL takes its turns here, so the process as a whole stays within `maxRps`.
 */
class SourceBudget {
  private nextSlot = 0;
  private lastSent = -Infinity;
  private backoffUntil = 0;
  private strikes = 0;

  constructor(private intervalMs: number) {}

  /** The lowest budget any client of this source asked for wins. */
  tighten(intervalMs: number): void {
    this.intervalMs = Math.max(this.intervalMs, intervalMs);
  }

  /**
   * Waits for this request's turn: after the previous turn plus the spacing, and after any
   * back-off (which may grow while it waits).
   * @throws HeadersSourceError (429 while backing off) when the turn would come after `deadline`.
   */
  async turn(deadline: number, what: string): Promise<void> {
    for (;;) {
      const now = Date.now();
      if (this.backoffUntil > now && this.backoffUntil > deadline)
        throw new HeadersSourceError(
          `${what}: rate-limited (429), backing off for ${this.backoffUntil - now} ms, past this request's deadline`,
          429,
        );
      // Reserved turns keep the queue's order and let a request that cannot be served in time fail at once.
      const at = Math.max(now, this.nextSlot, this.backoffUntil, this.lastSent + this.intervalMs);
      if (at > deadline)
        throw new HeadersSourceError(`${what}: no request slot within the deadline (HEADERS_MAX_RPS budget)`);
      this.nextSlot = at + this.intervalMs;
      if (at > now) await sleep(at - now);
      // Timers fire late under load: the spacing MUST hold between the requests actually sent.
      let t = Date.now();
      while (t < this.lastSent + this.intervalMs) {
        if (this.lastSent + this.intervalMs > deadline)
          throw new HeadersSourceError(`${what}: no request slot within the deadline (HEADERS_MAX_RPS budget)`);
        await sleep(this.lastSent + this.intervalMs - t);
        t = Date.now();
      }
      if (this.backoffUntil > t) continue;
      this.lastSent = t;
      return;
    }
  }

  /** Records a 429; returns the back-off in ms (`Retry-After` when given, at least 250 ms; else exponential with a cap). */
  rateLimited(retryAfterMs: number | undefined): number {
    this.strikes++;
    const wait =
      retryAfterMs === undefined
        ? Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (this.strikes - 1))
        : Math.max(RETRY_AFTER_FLOOR_MS, retryAfterMs);
    this.backoffUntil = Math.max(this.backoffUntil, Date.now() + wait);
    return wait;
  }

  answered(): void {
    this.strikes = 0;
  }
}

const budgets = new Map<string, SourceBudget>();

function budgetOf(base: string, maxRps: number): SourceBudget {
  const intervalMs = 1000 / maxRps;
  let budget = budgets.get(base);
  if (budget) budget.tighten(intervalMs);
  else budgets.set(base, (budget = new SourceBudget(intervalMs)));
  return budget;
}

/**
 * Block headers from a WhatsOnChain-compatible API (the subset the devnet also serves):
 * `GET /chain/info` and `GET /block/{hash}/header`. The JSON is never trusted alone: the 80-byte
 * header is rebuilt from its fields and MUST hash to the block hash asked for.
 *
 * Volume: requests are spaced by the per-process budget; a 429 backs off every request to the
 * source; headers are cached by hash. A cached header's confirmations come from a tip no older
 * than `tipMaxAgeMs` by walking the cached `prevHash` links down from it (the tip's ancestry is
 * fixed by its hash, so membership is exact as of that tip); otherwise the source is asked.
 * `tip()` always asks the source.
 * @throws HeadersSourceError on network faults, timeouts, 429s and an exhausted budget (never
 * read as "not found"), other non-2xx answers and malformed or inconsistent bodies.
 */
export class WocHeadersClient implements HeadersSource {
  private readonly base: string;
  private readonly timeoutMs: number;
  readonly #authorization: string | undefined;
  private readonly budget: SourceBudget;
  private readonly cacheSize: number;
  private readonly tipMaxAgeMs: number;
  private readonly logger: HeadersLogger | undefined;
  private readonly cache = new Map<string, CachedHeader>();
  private readonly fetching = new Map<string, Promise<ChainHeader | null>>();
  private lastTip: (ChainTipInfo & { readonly at: number }) | undefined;
  private tipInFlight: Promise<ChainTipInfo> | undefined;

  constructor(options: WocHeadersClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs;
    this.#authorization = options.apiKey !== undefined && options.apiKey.trim() !== '' ? options.apiKey : undefined;
    const maxRps = options.maxRps ?? DEFAULT_HEADERS_MAX_RPS;
    if (!(maxRps > 0)) throw new Error('maxRps must be positive');
    this.budget = budgetOf(this.base, maxRps);
    this.cacheSize = Math.max(1, options.cacheSize ?? DEFAULT_CACHE_SIZE);
    this.tipMaxAgeMs = options.tipMaxAgeMs ?? DEFAULT_TIP_MAX_AGE_MS;
    this.logger = options.logger;
  }

  /** The source's tip, always asked (concurrent callers share one request). */
  tip(): Promise<ChainTipInfo> {
    this.tipInFlight ??= this.fetchTip().finally(() => (this.tipInFlight = undefined));
    return this.tipInFlight;
  }

  async headerByHash(hashIn: string): Promise<ChainHeader | null> {
    const hash = hashIn.toLowerCase();
    if (!isHashHex(hash)) throw new Error(`not a block hash: ${hashIn.slice(0, 80)}`);
    const known = this.cache.get(hash);
    if (known) {
      this.cache.delete(hash);
      this.cache.set(hash, known);
      let tip = this.recentTip();
      if (!tip || known.height > tip.height) tip = await this.tip();
      // A link missing from the walk (typically the newest block) is fetched once and kept; after
      // two, asking for the block itself is cheaper.
      for (let links = 0; ; links++) {
        const walk = this.walk(tip, hash, known.height);
        if (typeof walk === 'number')
          return { hash, height: known.height, confirmations: walk, headerHex: known.headerHex };
        if (walk === undefined || links === 2 || (await this.fetchShared(walk.missing)) === null) break;
      }
    }
    return this.fetchShared(hash);
  }

  /** One request per hash at a time: concurrent callers share it. */
  private fetchShared(hash: string): Promise<ChainHeader | null> {
    let pending = this.fetching.get(hash);
    if (!pending) {
      pending = this.fetchHeader(hash).finally(() => this.fetching.delete(hash));
      this.fetching.set(hash, pending);
    }
    return pending;
  }

  private recentTip(): ChainTipInfo | undefined {
    return this.lastTip && Date.now() - this.lastTip.at <= this.tipMaxAgeMs ? this.lastTip : undefined;
  }

  /**
   * Confirmations of the block `hash` at `height` as of `tip`, from cached headers only:
   * `tip.height - height + 1` when the walk down from the tip meets it, -1 when the walk meets
   * another block at its height, `{missing}` when a link is not cached, `undefined` (ask the
   * source) when the block is above the tip, deeper than {@link MAX_WALK} or a link's height
   * does not fit.
   */
  private walk(tip: ChainTipInfo, hash: string, height: number): number | { missing: string } | undefined {
    if (height > tip.height || tip.height - height > MAX_WALK) return undefined;
    let cursor = tip.hash;
    for (let h = tip.height; h >= height; h--) {
      if (cursor === hash) return tip.height - height + 1;
      const link = this.cache.get(cursor);
      if (!link) return { missing: cursor };
      if (link.height !== h) return undefined;
      if (h === height) return -1;
      cursor = link.prevHash;
    }
    return undefined;
  }

  private async fetchTip(): Promise<ChainTipInfo> {
    const { status, body } = await this.get('/chain/info');
    if (status !== 200) throw new HeadersSourceError(`GET /chain/info answered ${status}`, status);
    const info = parse(chainInfo, body, '/chain/info');
    const hash = info.bestblockhash.toLowerCase();
    if (!isHashHex(hash)) throw new HeadersSourceError('bestblockhash is not a block hash');
    this.lastTip = { height: info.blocks, hash, at: Date.now() };
    return { height: info.blocks, hash };
  }

  private async fetchHeader(hash: string): Promise<ChainHeader | null> {
    const { status, body } = await this.get(`/block/${hash}/header`);
    if (status === 404) return null;
    if (status !== 200) throw new HeadersSourceError(`GET /block/${hash}/header answered ${status}`, status);
    const h = parse(headerJson, body, `/block/${hash}/header`);
    let hex: string;
    let prevHash: string;
    try {
      const header = headerFromFields(h);
      prevHash = header.prevHash;
      hex = serializeHeader(header).toString('hex');
    } catch (e) {
      throw new HeadersSourceError(`header fields of ${hash} are malformed: ${(e as Error).message}`, 200, e);
    }
    const rebuilt = hashOfHeader(hex);
    if (rebuilt !== hash || h.hash.toLowerCase() !== hash) {
      throw new HeadersSourceError(`the header served for ${hash} hashes to ${rebuilt}`, 200);
    }
    this.cache.delete(hash);
    this.cache.set(hash, { headerHex: hex, height: h.height, prevHash });
    while (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value as string);
    return { hash, height: h.height, confirmations: h.confirmations, headerHex: hex };
  }

  /**
   * One GET within the call's deadline: waits its turn in the budget, and on a 429 backs off
   * (every request to the source) and tries again while the deadline allows.
   */
  private async get(path: string): Promise<{ status: number; body: unknown }> {
    const deadline = Date.now() + this.timeoutMs;
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.#authorization !== undefined) headers['Authorization'] = this.#authorization;
    for (;;) {
      await this.budget.turn(deadline, `GET ${path}`);
      let res: Response;
      let text: string;
      try {
        res = await fetch(`${this.base}${path}`, {
          headers,
          signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
        });
        text = await res.text();
      } catch (e) {
        const name = (e as { name?: string } | null)?.name;
        throw new HeadersSourceError(
          name === 'TimeoutError' ? `GET ${path} gave no answer within ${this.timeoutMs} ms` : `GET ${path} failed`,
          undefined,
          e,
        );
      }
      if (res.status === 429) {
        const backoffMs = this.budget.rateLimited(retryAfterMs(res.headers.get('retry-after')));
        this.logger?.warn({ path, backoffMs }, 'headers source answered 429; every request to it backs off');
        continue;
      }
      this.budget.answered();
      if (res.status !== 200) return { status: res.status, body: null };
      try {
        return { status: 200, body: JSON.parse(text) as unknown };
      } catch {
        throw new HeadersSourceError(`GET ${path} answered a body that is not JSON`, 200);
      }
    }
  }
}

/** `Retry-After` as delay-seconds or an HTTP date, in ms (capped); `undefined` when absent or unreadable. */
function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const v = value.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, RETRY_AFTER_CAP_MS);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const r = schema.safeParse(body);
  if (!r.success) throw new HeadersSourceError(`${what}: unexpected body (${r.error.issues[0]?.message ?? ''})`, 200);
  return r.data;
}

/**
 * A headers source that remembers main-chain headers by hash for `ttlMs` (the ARC callback
 * route: a block's MINED callbacks arrive in dozens of batches within a second, each needing the
 * same header). Only headers with at least one confirmation are kept, and only briefly: a block
 * that leaves the main chain inside the window is caught by the confirmation pass's reorg check,
 * exactly as one that leaves just after an uncached fetch. Misses and faults go to `source`.
 */
export function cachingHeaders(source: HeadersSource, ttlMs: number, now: () => number = Date.now): HeadersSource {
  const cache = new Map<string, { header: ChainHeader; until: number }>();
  return {
    tip: () => source.tip(),
    async headerByHash(hash: string): Promise<ChainHeader | null> {
      const t = now();
      const hit = cache.get(hash);
      if (hit && hit.until > t) return hit.header;
      const header = await source.headerByHash(hash);
      if (cache.size > 64) for (const [k, v] of cache) if (v.until <= t) cache.delete(k);
      if (header && header.confirmations >= 1) cache.set(hash, { header, until: t + ttlMs });
      else cache.delete(hash);
      return header;
    },
  };
}
