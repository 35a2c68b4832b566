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
  readonly timeoutMs: number;
  /** Sent as `Authorization: Bearer` when set (WoC's paid plans accept an API key). */
  readonly apiKey?: string;
}

const chainInfo = z.object({ blocks: z.number().int().nonnegative(), bestblockhash: z.string() });
const headerJson = z.object({
  hash: z.string(),
  height: z.number().int().nonnegative(),
  confirmations: z.number().int(),
  version: z.number().int(),
  merkleroot: z.string(),
  time: z.number().int(),
  nonce: z.number().int(),
  bits: z.string(),
  previousblockhash: z.string().nullish(),
});

/**
 * Block headers from a WhatsOnChain-compatible API (the subset the devnet also serves):
 * `GET /chain/info` and `GET /block/{hash}/header`. The JSON is never trusted alone: the 80-byte
 * header is rebuilt from its fields and MUST hash to the block hash asked for.
 * @throws HeadersSourceError on network faults, timeouts, non-2xx answers and malformed or
 * inconsistent bodies.
 */
export class WocHeadersClient implements HeadersSource {
  private readonly base: string;

  constructor(private readonly options: WocHeadersClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
  }

  async tip(): Promise<ChainTipInfo> {
    const { status, body } = await this.get('/chain/info');
    if (status !== 200) throw new HeadersSourceError(`GET /chain/info answered ${status}`, status);
    const info = parse(chainInfo, body, '/chain/info');
    const hash = info.bestblockhash.toLowerCase();
    if (!isHashHex(hash)) throw new HeadersSourceError('bestblockhash is not a block hash');
    return { height: info.blocks, hash };
  }

  async headerByHash(hashIn: string): Promise<ChainHeader | null> {
    const hash = hashIn.toLowerCase();
    if (!isHashHex(hash)) throw new Error(`not a block hash: ${hashIn.slice(0, 80)}`);
    const { status, body } = await this.get(`/block/${hash}/header`);
    if (status === 404) return null;
    if (status !== 200) throw new HeadersSourceError(`GET /block/${hash}/header answered ${status}`, status);
    const h = parse(headerJson, body, `/block/${hash}/header`);
    let hex: string;
    try {
      hex = serializeHeader(headerFromFields(h)).toString('hex');
    } catch (e) {
      throw new HeadersSourceError(`header fields of ${hash} are malformed: ${(e as Error).message}`, 200, e);
    }
    const rebuilt = hashOfHeader(hex);
    if (rebuilt !== hash || h.hash.toLowerCase() !== hash) {
      throw new HeadersSourceError(`the header served for ${hash} hashes to ${rebuilt}`, 200);
    }
    return { hash, height: h.height, confirmations: h.confirmations, headerHex: hex };
  }

  private async get(path: string): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.options.apiKey) headers['Authorization'] = `Bearer ${this.options.apiKey}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.base}${path}`, { headers, signal: AbortSignal.timeout(this.options.timeoutMs) });
      text = await res.text();
    } catch (e) {
      const name = (e as { name?: string } | null)?.name;
      throw new HeadersSourceError(
        name === 'TimeoutError'
          ? `GET ${path} gave no answer within ${this.options.timeoutMs} ms`
          : `GET ${path} failed`,
        undefined,
        e,
      );
    }
    if (res.status !== 200) return { status: res.status, body: null };
    try {
      return { status: 200, body: JSON.parse(text) as unknown };
    } catch {
      throw new HeadersSourceError(`GET ${path} answered a body that is not JSON`, 200);
    }
  }
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
