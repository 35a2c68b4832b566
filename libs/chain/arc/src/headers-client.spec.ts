import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { createHash } from 'node:crypto';
import { WhatsOnChain } from '@bsv/sdk';
import { blockHash, serializeHeader, ZERO_HASH } from '@proofline/chain-domain';
import { createLogger } from '@proofline/shared-logger';
import { HeadersSourceError, WocHeadersClient } from './headers-client';
import { startProtocolFixture } from './testing/protocol-fixture';
import type { FixtureReply, FixtureRequest, ProtocolFixture } from './testing/protocol-fixture';

// A real loopback HTTP server (node:http, port 0) playing a WhatsOnChain-shaped headers service:
// it serves a chain of real headers, counts and timestamps every request, and answers 429 when told.

const KEY = 'woc-secret-key-4f9d2a';

interface Block {
  readonly hash: string;
  readonly height: number;
  readonly json: Record<string, unknown>;
}

/** `n` linked headers on top of `parent` (genesis when absent); `salt` makes a fork differ. */
function chainOf(n: number, salt: string, parent?: Block): Block[] {
  const out: Block[] = [];
  let prev = parent;
  for (let i = 0; i < n; i++) {
    const height = prev ? prev.height + 1 : 0;
    const fields = {
      version: 536870912,
      prevHash: prev ? prev.hash : ZERO_HASH,
      merkleRoot: createHash('sha256').update(`${salt} ${height}`).digest('hex'),
      time: 1_790_000_000 + height * 600,
      bits: 0x1d00ffff,
      nonce: height * 7 + 1,
    };
    const hash = blockHash(serializeHeader(fields));
    const block: Block = {
      hash,
      height,
      json: {
        hash,
        height,
        version: fields.version,
        merkleroot: fields.merkleRoot,
        time: fields.time,
        nonce: fields.nonce,
        bits: fields.bits.toString(16).padStart(8, '0'),
        previousblockhash: prev ? prev.hash : null,
      },
    };
    out.push(block);
    prev = block;
  }
  return out;
}

interface Seen {
  readonly at: number;
  readonly path: string;
  readonly authorization: string | undefined;
}

/** The headers service state one test drives, under its own path prefix (budgets are per base URL). */
class Woc {
  main: Block[];
  readonly known = new Map<string, Block>();
  readonly seen: Seen[] = [];
  /** Answers to give before the normal ones (429 with or without Retry-After, 500 …). */
  readonly script: FixtureReply[] = [];
  numericBits = false;

  constructor(main: Block[]) {
    this.main = main;
    for (const b of main) this.known.set(b.hash, b);
  }

  reorg(fork: Block[]): void {
    const base = fork[0]!.height;
    this.main = [...this.main.slice(0, base), ...fork];
    for (const b of fork) this.known.set(b.hash, b);
  }

  headerRequests(): number {
    return this.seen.filter((s) => s.path.includes('/block/')).length;
  }

  tipRequests(): number {
    return this.seen.filter((s) => s.path.endsWith('/chain/info')).length;
  }

  answer(req: FixtureRequest, path: string): FixtureReply {
    const authorization = req.headers.authorization;
    this.seen.push({ at: Date.now(), path, authorization });
    const scripted = this.script.shift();
    if (scripted) return scripted;
    const tip = this.main[this.main.length - 1]!;
    if (path === '/chain/info') return { status: 200, body: { blocks: tip.height, bestblockhash: tip.hash } };
    const m = /^\/block\/([0-9a-f]{64})\/header$/.exec(path);
    const block = m ? this.known.get(m[1]!) : undefined;
    if (!block) return { status: 404, body: 'Not Found' };
    const onMain = this.main[block.height]?.hash === block.hash;
    const bits = this.numericBits ? parseInt(block.json['bits'] as string, 16) : block.json['bits'];
    return {
      status: 200,
      body: { ...block.json, bits, confirmations: onMain ? tip.height - block.height + 1 : -1 },
    };
  }
}

describe('WocHeadersClient against a WhatsOnChain-shaped HTTP server', () => {
  let fx: ProtocolFixture;
  const services = new Map<string, Woc>();
  let n = 0;

  beforeAll(async () => {
    fx = await startProtocolFixture((req) => {
      if (req.path.startsWith('/hang/')) return 'hang';
      const m = /^\/(t\d+)(\/.*)$/.exec(req.path);
      const woc = m ? services.get(m[1]!) : undefined;
      return woc ? woc.answer(req, m![2]!) : { status: 404 };
    });
  });
  afterAll(() => fx.close());

  /** A fresh service (own base URL, so its own per-process budget) with a main chain of `length`. */
  function service(length = 10): { woc: Woc; url: string; chain: Block[] } {
    const id = `t${++n}`;
    const chain = chainOf(length, id);
    const woc = new Woc(chain);
    services.set(id, woc);
    return { woc, url: `${fx.url}/${id}`, chain };
  }

  it('sends HEADERS_API_KEY bare in Authorization, exactly as the sdk’s WhatsOnChain tracker; nothing without a key', async () => {
    class SdkHeaders extends WhatsOnChain {
      headers(): Record<string, string> {
        return this.getHttpHeaders();
      }
    }
    const { woc, url, chain } = service(3);
    await new WocHeadersClient({ url, timeoutMs: 2000, apiKey: KEY, maxRps: 50 }).headerByHash(chain[1]!.hash);
    await new WocHeadersClient({ url, timeoutMs: 2000, apiKey: KEY, maxRps: 50 }).tip();
    await new WocHeadersClient({ url, timeoutMs: 2000, maxRps: 50 }).tip();
    await new WocHeadersClient({ url, timeoutMs: 2000, apiKey: '  ', maxRps: 50 }).tip();
    const sdk = new SdkHeaders('main', { apiKey: KEY }).headers();
    expect(sdk['Authorization']).toBe(KEY);
    expect(woc.seen.map((s) => s.authorization)).toEqual([KEY, KEY, undefined, undefined]);
    expect(new SdkHeaders('main', { apiKey: '  ' }).headers()['Authorization']).toBeUndefined();
  });

  it('accepts bits as a number or as 8 hex digits: the same 80 bytes', async () => {
    const { woc, url, chain } = service(3);
    const asHex = await new WocHeadersClient({ url, timeoutMs: 2000, maxRps: 50 }).headerByHash(chain[2]!.hash);
    woc.numericBits = true;
    const asNumber = await new WocHeadersClient({ url, timeoutMs: 2000, maxRps: 50 }).headerByHash(chain[2]!.hash);
    expect(asNumber).toEqual(asHex);
    expect(asNumber).toMatchObject({ hash: chain[2]!.hash, height: 2, confirmations: 1 });
    expect(woc.headerRequests()).toBe(2);
    expect(woc.seen.every((s) => s.path.endsWith('/header'))).toBe(true);
  });

  it('keeps every client of one source within HEADERS_MAX_RPS: requests measured at the server are spaced', async () => {
    const { woc, url, chain } = service(12);
    const a = new WocHeadersClient({ url, timeoutMs: 10_000, maxRps: 5 });
    const b = new WocHeadersClient({ url, timeoutMs: 10_000, maxRps: 5 });
    const started = Date.now();
    const answers = await Promise.all([
      ...chain.slice(0, 5).map((blk) => a.headerByHash(blk.hash)),
      ...chain.slice(5, 10).map((blk) => b.headerByHash(blk.hash)),
      a.tip(),
      b.tip(),
    ]);
    expect(answers.slice(0, 10).map((h) => h?.hash)).toEqual(chain.slice(0, 10).map((blk) => blk.hash));
    const at = woc.seen.map((s) => s.at);
    expect(at).toHaveLength(12);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    // Sent 200 ms apart; on a busy machine one arrival may be late (a new connection), which
    // shortens the gap before the next one, so gaps are checked loosely and the whole strictly.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(100);
    expect([...gaps].sort((x, y) => x - y)[Math.floor(gaps.length / 2)]).toBeGreaterThanOrEqual(190);
    expect(at[at.length - 1]! - at[0]!).toBeGreaterThanOrEqual(11 * 200 - 150);
    expect(Date.now() - started).toBeGreaterThanOrEqual(11 * 200 - 20);
    // No 1 s window holds more than 5 requests (+1 for an arrival on the window's edge).
    for (const t of at) expect(at.filter((u) => u >= t && u < t + 1000).length).toBeLessThanOrEqual(6);
  });

  it('fails a request that cannot get a slot within its deadline with HeadersSourceError, sending nothing', async () => {
    const { woc, url, chain } = service(6);
    const client = new WocHeadersClient({ url, timeoutMs: 1500, maxRps: 1 });
    const results = await Promise.allSettled(chain.slice(0, 4).map((blk) => client.headerByHash(blk.hash)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
    for (const r of results.slice(2)) {
      const e = (r as PromiseRejectedResult).reason as HeadersSourceError;
      expect(e).toBeInstanceOf(HeadersSourceError);
      expect(e.errorCode).toBe('HEADERS_UNAVAILABLE');
      expect(e.message).toMatch(/HEADERS_MAX_RPS/);
    }
    expect(woc.headerRequests()).toBe(2);
  });

  it('backs off on a 429 for Retry-After seconds, every request of the process with it, then answers', async () => {
    const { woc, url, chain } = service(4);
    woc.script.push({ status: 429, headers: { 'Retry-After': '1' }, body: 'Too Many Requests' });
    const client = new WocHeadersClient({ url, timeoutMs: 5000, maxRps: 50 });
    const first = client.headerByHash(chain[3]!.hash);
    await new Promise((r) => setTimeout(r, 100)); // inside the back-off
    const other = new WocHeadersClient({ url, timeoutMs: 5000, maxRps: 50 }).headerByHash(chain[2]!.hash);
    expect(await first).toMatchObject({ hash: chain[3]!.hash, confirmations: 1 });
    expect(await other).toMatchObject({ hash: chain[2]!.hash, confirmations: 2 });
    const at = woc.seen.map((s) => s.at);
    expect(at).toHaveLength(3); // the 429, then both after the back-off
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(990);
    expect(at[2]! - at[0]!).toBeGreaterThanOrEqual(990);
  });

  it('takes Retry-After: 0 as a short pause, not a tight loop of retries', async () => {
    const { woc, url, chain } = service(2);
    woc.script.push({ status: 429, headers: { 'Retry-After': '0' } }, { status: 429, headers: { 'Retry-After': '0' } });
    const client = new WocHeadersClient({ url, timeoutMs: 3000, maxRps: Infinity });
    expect(await client.headerByHash(chain[1]!.hash)).toMatchObject({ height: 1 });
    const at = woc.seen.map((s) => s.at);
    expect(at).toHaveLength(3);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(240);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(240);
  });

  it('backs off exponentially on 429s without Retry-After, and resets after an answer', async () => {
    const { woc, url, chain } = service(4);
    woc.script.push({ status: 429 }, { status: 429 });
    const client = new WocHeadersClient({ url, timeoutMs: 8000, maxRps: 50 });
    expect(await client.headerByHash(chain[1]!.hash)).toMatchObject({ height: 1 });
    woc.script.push({ status: 429 });
    expect(await client.headerByHash(chain[2]!.hash)).toMatchObject({ height: 2 });
    const at = woc.seen.map((s) => s.at);
    expect(at).toHaveLength(5);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(990); // 1 s
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(1990); // then 2 s
    expect(at[4]! - at[3]!).toBeGreaterThanOrEqual(990); // back to 1 s after an answer
    expect(at[4]! - at[3]!).toBeLessThan(1900);
  });

  it('never reads a 429 as "not found": a back-off past the deadline is HeadersSourceError 429, and so is every request during it', async () => {
    const { woc, url } = service(3);
    woc.script.push({ status: 429, headers: { 'Retry-After': '30' } });
    const client = new WocHeadersClient({ url, timeoutMs: 1000, maxRps: 50 });
    const unknown = 'cd'.repeat(32); // the server would answer 404 for it: after a 429 it MUST NOT become null
    const e = await client.headerByHash(unknown).then(
      () => null,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(HeadersSourceError);
    expect((e as HeadersSourceError).upstreamStatus).toBe(429);
    await expect(client.tip()).rejects.toMatchObject({ upstreamStatus: 429 });
    await expect(new WocHeadersClient({ url, timeoutMs: 1000 }).headerByHash('ef'.repeat(32))).rejects.toMatchObject({
      upstreamStatus: 429,
      errorCode: 'HEADERS_UNAVAILABLE',
    });
    expect(woc.seen).toHaveLength(1); // nothing sent while backing off
  });

  it('caches headers by hash and derives confirmations from a recent tip; main-chain membership follows the source', async () => {
    const { woc, url, chain } = service(8);
    const client = new WocHeadersClient({ url, timeoutMs: 2000, maxRps: 50, tipMaxAgeMs: 60_000 });
    // Unknown blocks are asked for, once each, concurrent callers sharing the request.
    const twice = await Promise.all([client.headerByHash(chain[7]!.hash), client.headerByHash(chain[7]!.hash)]);
    expect(twice[0]).toEqual(twice[1]);
    for (const blk of chain.slice(0, 7).reverse()) await client.headerByHash(blk.hash);
    expect(woc.headerRequests()).toBe(8);
    // With a tip, every cached header is answered from memory, confirmations included.
    await client.tip();
    const before = woc.seen.length;
    for (const blk of chain)
      expect(await client.headerByHash(blk.hash)).toMatchObject({
        hash: blk.hash,
        height: blk.height,
        confirmations: 8 - blk.height,
      });
    expect(woc.seen.length).toBe(before);

    // A reorg replaces heights 5..7 with 5..8 of a fork; the next tip() sees it.
    const fork = chainOf(4, 'fork', chain[4]);
    woc.reorg(fork);
    await client.tip();
    // The fork's headers are not cached yet: the source is asked, and says the old block is off the main chain.
    expect(await client.headerByHash(chain[6]!.hash)).toMatchObject({ confirmations: -1 });
    for (const blk of fork)
      expect(await client.headerByHash(blk.hash)).toMatchObject({ confirmations: 9 - blk.height });
    const afterFork = woc.seen.length;
    // Now derived from the cache: off the main chain, on it, with no request.
    expect(await client.headerByHash(chain[5]!.hash)).toMatchObject({ confirmations: -1 });
    expect(await client.headerByHash(chain[7]!.hash)).toMatchObject({ confirmations: -1 });
    expect(await client.headerByHash(chain[4]!.hash)).toMatchObject({ confirmations: 5 });
    expect(await client.headerByHash(fork[3]!.hash)).toMatchObject({ confirmations: 1 });
    expect(woc.seen.length).toBe(afterFork);
  });

  it('fetches a new tip’s header once to link it, then answers every cached header from memory', async () => {
    const { woc, url, chain } = service(5);
    const client = new WocHeadersClient({ url, timeoutMs: 2000, maxRps: 50, tipMaxAgeMs: 60_000 });
    for (const blk of chain) await client.headerByHash(blk.hash);
    const next = chainOf(1, 'next', chain[4]);
    woc.reorg(next); // a new block on top
    await client.tip();
    const before = woc.headerRequests();
    for (let i = 0; i < 3; i++)
      for (const blk of chain)
        expect(await client.headerByHash(blk.hash)).toMatchObject({ confirmations: 6 - blk.height });
    expect(woc.headerRequests()).toBe(before + 1);
    expect(woc.seen[woc.seen.length - 1]!.path).toBe(`/block/${next[0]!.hash}/header`);
  });

  it('asks for the tip again when it is older than tipMaxAgeMs, and evicts the least recently used header', async () => {
    const { woc, url, chain } = service(4);
    const client = new WocHeadersClient({ url, timeoutMs: 2000, maxRps: 50, tipMaxAgeMs: 200, cacheSize: 3 });
    for (const blk of chain.slice(1)) await client.headerByHash(blk.hash);
    await client.tip();
    await client.headerByHash(chain[2]!.hash);
    expect(woc.tipRequests()).toBe(1);
    await new Promise((r) => setTimeout(r, 250));
    // A stale tip: one /chain/info, then every cached header from memory.
    for (const blk of chain.slice(1)) expect(await client.headerByHash(blk.hash)).toMatchObject({ height: blk.height });
    expect(woc.tipRequests()).toBe(2);
    expect(woc.headerRequests()).toBe(3);
    // A fourth header evicts the least recently used (height 1), which is then asked for again.
    await client.headerByHash(chain[0]!.hash);
    await client.headerByHash(chain[1]!.hash);
    expect(woc.headerRequests()).toBe(5);
  });

  it('never puts the key in an error, an inspected client or a log line', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'debug',
      name: 'headers-spec',
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    });
    const { woc, url, chain } = service(3);
    const client = new WocHeadersClient({ url, timeoutMs: 1200, apiKey: KEY, maxRps: 50, logger });
    woc.script.push({ status: 429 }, { status: 500 }, { status: 200, body: 'not json' });
    const errors: unknown[] = [];
    for (const call of [
      () => client.headerByHash(chain[1]!.hash), // 429, then 500 after the back-off
      () => client.tip(), // a body that is not JSON
      () => new WocHeadersClient({ url: 'http://127.0.0.1:1', timeoutMs: 500, apiKey: KEY }).tip(), // refused
      () => new WocHeadersClient({ url: `${fx.url}/hang`, timeoutMs: 300, apiKey: KEY }).tip(),
    ])
      errors.push(
        await call().then(
          () => 'answered',
          (e: unknown) => e,
        ),
      );
    expect(errors.every((e) => e instanceof HeadersSourceError)).toBe(true);
    for (const e of errors) {
      logger.error({ err: e }, 'headers source failed');
      expect(inspect(e, { depth: 10 })).not.toContain(KEY);
      expect(JSON.stringify(e)).not.toContain(KEY);
    }
    logger.info({ client }, 'client');
    expect(lines.some((l) => l.includes('backs off'))).toBe(true);
    expect(lines.join('\n')).not.toContain(KEY);
    expect(inspect(client, { depth: 10, showHidden: true })).not.toContain(KEY);
    expect(JSON.stringify(client)).not.toContain(KEY);
    expect(woc.seen.map((s) => s.authorization)).toEqual([KEY, KEY, KEY]);
  });
});
