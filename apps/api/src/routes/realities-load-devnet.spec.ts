import { startArcDevnet, startArcRuleProxy } from '@proofline/devnet-testing';
import type { ArcDevnet, ArcRuleProxy } from '@proofline/devnet-testing';
import { composePublicationSide } from '@proofline/records-publication-testing';
import type { PublicationSide } from '@proofline/records-publication-testing';
import { createLogger } from '@proofline/shared-logger';
import { eventually, freePort, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { call, closeDevnetSpec, seedKey, startApi } from '../testing/harness';
import type { RunningApi } from '../testing/harness';

// Issue 19's "Done when", small enough for CI (`npm run bench:realities` is the full load): the
// real API, publisher, confirmation worker and callback worker against the devnet node with ARC's
// strictness and every reality on, answering each submission 1 s after it arrived; independent
// writes and linked chains updated as fast as answers come, for LOAD_MS. Every accepted record
// must end confirmed with a proof (none failed), each chain in order, the funding pool settled.

const LOAD_MS = 6000;
const WRITERS = 4;
const CHAINS = 4;
const TOKEN = 'callback-token-realities-0123456';

jest.setTimeout(120_000);

interface Written {
  readonly txId: string;
  readonly family: 'records' | 'linkedrecords';
  readonly chain?: number;
}

describe('a load of independent writes and linked chains against the devnet node with every reality on', () => {
  const prefix = uniquePrefix('realities');
  const logger = createLogger({ level: 'silent', name: 'test' });
  const nodeRedis = testRedisClient({ maxRetriesPerRequest: null });
  let dev: ArcDevnet;
  let proxy: ArcRuleProxy;
  let api: RunningApi;
  let worker: PublicationSide;
  let writerKey: string;
  /** ARC's answer to each submitted transaction, by txStatus or problem status. */
  const answered = new Map<string, number>();

  beforeAll(async () => {
    // Over the specs' STRICT_ARC and TEST_REALITIES: the 1 s submission delay of the issue's
    // measure, and an ARC that refuses every raw transaction (460): only Extended Format passes.
    // A block every 2.5 s and SEEN_ON_NETWORK 4 s after acceptance, so that most answers (at 1 s)
    // still read ACCEPTED_BY_NETWORK: with a block every second every answer read MINED once the
    // service wrote fast enough, and a 0.5 s margin to SEEN was eaten by a loaded CI machine.
    dev = await startArcDevnet({
      redis: nodeRedis,
      prefix,
      blockIntervalMs: 2500,
      realities: { submitDelayMs: 1000, timeToSeenMs: 4000 },
      strictness: { standardFormatSupported: false },
    });
    // Counts ARC's answers, changes none.
    proxy = await startArcRuleProxy(dev.node.url);
    proxy.rule = (req) =>
      req.method === 'POST' && req.path.startsWith('/v1/tx')
        ? {
            rewrite: (status, body) => {
              for (const e of (Array.isArray(body) ? body : [body]) as { txStatus?: string; status?: number }[]) {
                const what = e.txStatus ?? String(e.status ?? status);
                answered.set(what, (answered.get(what) ?? 0) + 1);
              }
              return { status, body };
            },
          }
        : 'forward';
    const port = await freePort();
    api = await startApi({
      prefix,
      port,
      fund: 0,
      env: {
        ...dev.env,
        ARC_URL: proxy.url,
        ARC_CALLBACK_URL: `http://127.0.0.1:${port}/arc/callback`,
        ARC_CALLBACK_TOKEN: TOKEN,
        // Proofs come by callback; a poll catches a lost one after 10 s (what is held below SEEN is polled at once).
        ARC_CALLBACK_GRACE_MS: '10000',
        ARC_POLL_MS: '500',
      },
    });
    for (let i = 0; i < 4; i++) await dev.fund(500, 1000);
    writerKey = (await seedKey(api, { tenant: 'acme', permissions: ['Issuer_Admin'] })).rawKey;
    // The worker side as apps/worker runs it: publisher, confirmations, callbacks.
    worker = composePublicationSide({ prefix, config: api.deps.config, pool: dev.pool, clock: api.deps.clock, logger });
    await worker.startCallbacks();
    worker.publication.startPublisher();
    await worker.publication.startConfirmations();
  });
  afterAll(async () => {
    await closeDevnetSpec({ redis: nodeRedis, prefix, worker, api, proxy, dev });
  });

  it('every accepted record ends confirmed with a proof, none failed, chains in order; the pool settles everything', async () => {
    const written: Written[] = [];
    const until = Date.now() + LOAD_MS;
    const post = (path: string, body: string) =>
      call(api, 'POST', path, { key: writerKey, body, contentType: 'application/octet-stream' });
    /**
     * Waits out a refusal the API marks retryable (Retry-After) and says so: a chain at
     * MAX_UNCONFIRMED_LINKS, a pool briefly empty, a full publication backlog, or a Redis command
     * slower than its bound on a loaded CI machine (503 REDIS_UNAVAILABLE), as a client is told to
     * honour them. Too many of them leave too few writes (asserted below).
     */
    const backedOff = async (res: { status: number; body: unknown }): Promise<boolean> => {
      const code = (res.body as { errorCode?: string } | null)?.errorCode;
      const retryable =
        (res.status === 409 && code === 'CHAIN_UNCONFIRMED_DEPTH') ||
        (res.status === 503 &&
          ['FUNDING_EXHAUSTED', 'PUBLICATION_BACKLOG_FULL', 'REDIS_UNAVAILABLE'].includes(code ?? ''));
      if (retryable) await new Promise((r) => setTimeout(r, 1000));
      return retryable;
    };
    const independent = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; Date.now() < until; i++) {
        const res = await post('/api/v1/records?encode=SHA256', `writer ${w} record ${i}`);
        if (await backedOff(res)) continue;
        expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
        written.push({ txId: (res.body as { txId: string }).txId, family: 'records' });
      }
    });
    const linked = Array.from({ length: CHAINS }, async (_, c) => {
      let end: { txId: string; updateToken: string } | null = null;
      for (let v = 0; Date.now() < until; v++) {
        const res = await post(
          end
            ? `/api/v1/linkedrecords/${end.txId}/update?updateToken=${encodeURIComponent(end.updateToken)}`
            : '/api/v1/linkedrecords',
          `chain ${c} version ${v}`,
        );
        // Anything but a retryable refusal must be a success.
        if (await backedOff(res)) continue;
        expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
        end = res.body as { txId: string; updateToken: string };
        written.push({ txId: end.txId, family: 'linkedrecords', chain: c });
      }
    });
    await Promise.all([...independent, ...linked]);
    expect(written.length).toBeGreaterThan(50);

    // Every record proven (the proof store, one round trip for all), then read as users read it.
    await eventually(
      async () => (await worker.chain.store.inclusions(written.map((w) => w.txId))).every((inc) => inc?.proof),
      90_000,
      500,
    );
    const inclusions = await worker.chain.store.inclusions(written.map((w) => w.txId));
    for (const w of written) {
      const s = (await call(api, 'GET', `/api/v1/${w.family}/${w.txId}/status`, { key: writerKey })).body as {
        publication: string;
        failure?: string;
        confirmation: { merkleProof: { txOrId: string } } | null;
      };
      expect({
        txId: w.txId,
        publication: s.publication,
        failure: s.failure,
        proofOf: s.confirmation?.merkleProof.txOrId,
      }).toEqual({ txId: w.txId, publication: 'published', failure: undefined, proofOf: w.txId });
    }
    // A chain confirms in order: no version in a block below its previous version's.
    for (let c = 0; c < CHAINS; c++) {
      const heights = written.flatMap((w, i) => (w.chain === c ? [inclusions[i]?.blockHeight ?? -1] : []));
      expect(heights.length).toBeGreaterThan(1);
      expect(heights).toEqual([...heights].sort((a, b) => a - b));
    }
    // Nothing the pool committed is left waiting: every record's funding settled by the chain.
    await eventually(async () => (await dev.pool.unsettled(1000)).every((t) => t.kind !== 'record'), 30_000, 250);
    // The realities were on: ARC answered below SEEN_ON_NETWORK (and MINED, for what a block took
    // within the submission delay), and refused nothing.
    expect(answered.get('ACCEPTED_BY_NETWORK')).toBeGreaterThan(0);
    expect([...answered.keys()].every((k) => ['ACCEPTED_BY_NETWORK', 'SEEN_ON_NETWORK', 'MINED'].includes(k))).toBe(
      true,
    );
  });
});
