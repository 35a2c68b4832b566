import { sha256d, spentTxIds, standardFromExtended, toDisplayHex } from '@proofline/chain-domain';
import { ArcClient } from './arc-client';
import { ArcChainPublisher, ArcSubmitBatcher } from './arc-publisher';
import { startProtocolFixture } from './testing/protocol-fixture';
import type { FixtureRequest, ProtocolFixture } from './testing/protocol-fixture';

/** A minimal transaction spending output 0 of `parent` (or of a foreign txId), unique by `n`. */
function tx(parent: string | null, n: number): { txId: string; rawTx: Uint8Array } {
  const prev = Buffer.from(parent ?? n.toString(16).padStart(64, 'f'), 'hex').reverse();
  const out = Buffer.alloc(8);
  out.writeUInt32LE(n);
  const raw = Buffer.concat([
    Buffer.from('01000000', 'hex'),
    Buffer.from([1]),
    prev,
    Buffer.alloc(4),
    Buffer.from([0]),
    Buffer.from('ffffffff', 'hex'),
    Buffer.from([1]),
    out,
    Buffer.from([1, 0x51]),
    Buffer.alloc(4),
  ]);
  return { txId: toDisplayHex(sha256d(raw)), rawTx: raw };
}

/** The txIds a request carries, in order. */
function txIdsOf(req: FixtureRequest): string[] {
  const body = JSON.parse(req.body) as { rawTx: string } | { rawTx: string }[];
  return (Array.isArray(body) ? body : [body]).map((b) =>
    toDisplayHex(sha256d(standardFromExtended(Buffer.from(b.rawTx, 'hex')))),
  );
}

const seen = (txid: string) => ({
  txid,
  txStatus: 'SEEN_ON_NETWORK',
  status: 200,
  title: 'OK',
  timestamp: '2026-11-22T00:00:00Z',
  blockHash: '',
  blockHeight: 0,
  merklePath: '',
  extraInfo: '',
  competingTxs: null,
});

/**
 * ARC answering every transaction SEEN after `delayMs`, keeping what it received and answered:
 * a real HTTP server, as slow as the test wants.
 */
function slowArc(fx: ProtocolFixture, delayMs: number) {
  const log = {
    open: 0,
    peak: 0,
    received: [] as { at: number; txIds: string[] }[],
    answered: new Map<string, number>(),
  };
  fx.handle(async (req) => {
    const txIds = txIdsOf(req);
    log.received.push({ at: performance.now(), txIds });
    log.open += 1;
    log.peak = Math.max(log.peak, log.open);
    await new Promise((r) => setTimeout(r, delayMs));
    log.open -= 1;
    for (const t of txIds) log.answered.set(t, performance.now());
    const entries = txIds.map(seen);
    return { status: 200, body: req.path === '/v1/txs' ? entries : entries[0] };
  });
  return log;
}

describe('ArcSubmitBatcher: several requests in flight, parents before children', () => {
  let fx: ProtocolFixture;
  let publisher: ArcChainPublisher;
  beforeAll(async () => {
    fx = await startProtocolFixture();
    publisher = new ArcChainPublisher(new ArcClient({ url: fx.url, timeoutMs: 5000 }));
  });
  afterAll(() => fx.close());

  it('keeps at most maxInFlight requests out, and uses them', async () => {
    const arc = slowArc(fx, 80);
    const batcher = new ArcSubmitBatcher(publisher, { maxBatch: 2, maxInFlight: 3, windowMs: 1 });
    const txs = Array.from({ length: 20 }, (_, i) => tx(null, i + 1));
    const results = await Promise.all(txs.map((t) => batcher.submit(t)));
    expect(results.map((r) => r.kind)).toEqual(txs.map(() => 'accepted'));
    expect(arc.peak).toBe(3);
    expect(batcher.peakInFlight).toBe(3);
    expect(arc.received.flatMap((r) => r.txIds).sort()).toEqual(txs.map((t) => t.txId).sort());
  });

  it('one in flight when told so (ARC_MAX_IN_FLIGHT=1)', async () => {
    const arc = slowArc(fx, 30);
    const batcher = new ArcSubmitBatcher(publisher, { maxBatch: 2, maxInFlight: 1, windowMs: 1 });
    await Promise.all(Array.from({ length: 8 }, (_, i) => batcher.submit(tx(null, 100 + i))));
    expect(arc.peak).toBe(1);
    expect(batcher.sent).toEqual([2, 2, 2, 2]);
  });

  it('never sends a child before the request carrying its parent was answered (or in the same request)', async () => {
    const arc = slowArc(fx, 60);
    const batcher = new ArcSubmitBatcher(publisher, { maxBatch: 3, maxInFlight: 4, windowMs: 1 });
    // Three chains of seven, interleaved with independent transactions, submitted in one turn
    // and later on while their parents are out.
    const chains = [0, 1, 2].map((c) => {
      const links = [tx(null, 1000 + c)];
      for (let i = 1; i < 7; i++) links.push(tx(links[i - 1]!.txId, 1000 + c * 10 + i));
      return links;
    });
    const independents = Array.from({ length: 9 }, (_, i) => tx(null, 2000 + i));
    const first = [...chains.flatMap((l) => l.slice(0, 4)), ...independents].map((t) => batcher.submit(t));
    await new Promise((r) => setTimeout(r, 20));
    const later = chains.flatMap((l) => l.slice(4)).map((t) => batcher.submit(t));
    const results = await Promise.all([...first, ...later]);
    expect(results.every((r) => r.kind === 'accepted')).toBe(true);
    expect(arc.peak).toBeGreaterThan(1);
    expect(arc.peak).toBeLessThanOrEqual(4);

    const sentAt = new Map<string, { at: number; request: number }>();
    arc.received.forEach((r, request) => r.txIds.forEach((t) => sentAt.set(t, { at: r.at, request })));
    for (const links of chains) {
      for (let i = 1; i < links.length; i++) {
        const child = sentAt.get(links[i]!.txId)!;
        const parent = sentAt.get(links[i - 1]!.txId)!;
        expect(spentTxIds(links[i]!.rawTx)).toEqual([links[i - 1]!.txId]);
        if (child.request === parent.request) {
          // Same request: the parent comes first in it.
          const ids = arc.received[child.request]!.txIds;
          expect(ids.indexOf(links[i - 1]!.txId)).toBeLessThan(ids.indexOf(links[i]!.txId));
        } else {
          expect(child.at).toBeGreaterThanOrEqual(arc.answered.get(links[i - 1]!.txId)!);
        }
      }
    }
  });
});
