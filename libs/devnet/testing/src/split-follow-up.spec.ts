import { ArcClient } from '@proofline/chain-arc';
import { BsvSplitBuilder, deriveChainKeys } from '@proofline/chain-bsv';
import { Splitter, arcSubmitPort } from '@proofline/chain-wallet';
import { DEVNET_WALLET_SEED } from '@proofline/shared-config';
import { testRedis, uniquePrefix } from '@proofline/shared-testing';
import { startArcDevnet } from './arc-devnet';
import type { ArcDevnet } from './arc-devnet';
import { startArcRuleProxy, statusEntry, submittedTxIds } from './arc-rule-proxy';
import type { ArcRuleProxy } from './arc-rule-proxy';

// A split ARC answers below SEEN_ON_NETWORK (X-WaitFor timed out) is followed up at the next
// run by asking ARC its status, not re-sent after a fixed delay: the devnet node behind a real
// HTTP server that answers STORED to submissions, as ARC does when X-WaitFor times out.

jest.setTimeout(30_000);

describe('the splitter follows up a split answered below SEEN_ON_NETWORK (devnet behind an ARC-answering server)', () => {
  const prefix = uniquePrefix('splitfollow');
  const { redis, cleanup } = testRedis(prefix);
  let dev: ArcDevnet;
  let proxy: ArcRuleProxy;
  beforeAll(async () => {
    dev = await startArcDevnet({ redis, prefix });
    proxy = await startArcRuleProxy(dev.node.url);
  });
  /** The splitter as the wallet services wire it (submit and status on one ARC client), through the proxy. */
  const splitterThroughProxy = () => {
    const arc = new ArcClient({ url: proxy.url, timeoutMs: 10_000 });
    return new Splitter({
      pool: dev.pool,
      builder: new BsvSplitBuilder({ keys: deriveChainKeys(DEVNET_WALLET_SEED), satoshisPerKilobyte: 1 }),
      submit: arcSubmitPort(arc),
      status: (txId) => arc.status(txId),
      satoshisPerKilobyte: 1,
    });
  };
  afterAll(async () => {
    await proxy.close();
    await dev.close();
    await cleanup();
  });

  it('outputs stay pending at STORED; the next run asks ARC, sees SEEN_ON_NETWORK and frees them, without sending the split again', async () => {
    await dev.fund(1, 200_000);
    const splitter = splitterThroughProxy();
    // The node takes the split; ARC's answer is the status reached when X-WaitFor timed out.
    proxy.rule = (req) =>
      req.method === 'POST' && req.path === '/v1/tx'
        ? { rewrite: () => ({ status: 200, body: statusEntry(submittedTxIds(req)[0] as string, 'STORED') }) }
        : 'forward';
    const request = { lowWater: 5, target: 10, satoshisEach: 1000 };
    const first = await splitter.ensureLowWater(request);
    expect(first).toMatchObject({ status: 'split', outcome: 'pending', outputs: 10 });
    if (first.status !== 'split') throw new Error('expected a split');
    expect(await dev.pool.denominatedCount(1000)).toBe(0);
    expect(await dev.pool.status()).toMatchObject({ pending: { count: 11 }, unsettledTransactions: 1 });
    const posts = () => proxy.requests.filter((r) => r.method === 'POST').length;
    expect(posts()).toBe(1);

    // The next run (no time has passed): ARC is asked, the split is SEEN_ON_NETWORK, outputs free.
    expect(await splitter.ensureLowWater(request)).toEqual({ status: 'sufficient', usable: 10 });
    expect(proxy.requests.some((r) => r.method === 'GET' && r.path === `/v1/tx/${first.txId}`)).toBe(true);
    expect(posts()).toBe(1); // not sent again
    expect(await dev.pool.denominatedCount(1000)).toBe(10);
    expect(await dev.pool.status()).toMatchObject({ pending: { count: 0 }, unsettledTransactions: 0 });
  });

  it('a split ARC does not know (lost) is sent again, same bytes, at the next run', async () => {
    await dev.fund(1, 200_000);
    const splitter = splitterThroughProxy();
    let lose = true;
    // The submission never reaches the node (lost on the way); ARC's answer was STORED.
    proxy.rule = (req) =>
      req.method === 'POST' && req.path === '/v1/tx' && lose
        ? { status: 200, body: statusEntry(submittedTxIds(req)[0] as string, 'STORED') }
        : 'forward';
    const request = { lowWater: 15, target: 20, satoshisEach: 1000, force: true };
    const first = await splitter.ensureLowWater(request);
    expect(first).toMatchObject({ status: 'split', outcome: 'pending' });
    if (first.status !== 'split') throw new Error('expected a split');
    lose = false;
    const before = proxy.requests.length;
    await splitter.ensureLowWater(request);
    const after = proxy.requests.slice(before);
    expect(after.map((r) => `${r.method} ${r.path}`).slice(0, 2)).toEqual([`GET /v1/tx/${first.txId}`, 'POST /v1/tx']);
    expect(submittedTxIds(after[1]!)).toEqual([first.txId]);
    expect((await dev.pool.unsettled(100)).map((t) => t.txId)).not.toContain(first.txId);
  });
});
