import { createHash } from 'node:crypto';
import { MerklePath, Transaction } from '@bsv/sdk';
import { eventually, keysMatching } from '@proofline/shared-testing';
import { blockHash, parseHeader } from '@proofline/chain-domain';
import { KEYS, startRecordsFixture } from '../testing/records-fixture';
import type { KeyRole, RecordsFixture } from '../testing/records-fixture';
import { recordsKeys } from '@proofline/records-data-access';

const LR = '/api/v1/linkedrecords';
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest();

interface WriteResult {
  txId: string;
  updateToken: string;
  encoding: { contentType: string; output: string }[];
}

describe('linked records over HTTP', () => {
  let f: RecordsFixture;
  beforeAll(async () => {
    f = await startRecordsFixture();
  });
  afterAll(async () => {
    await f.close();
  });

  async function write(path: string, body: string | Buffer, key: KeyRole = KEYS.writerA): Promise<WriteResult> {
    const res = await f.request('POST', path, { body, key });
    const json = (await res.json()) as WriteResult;
    expect({ status: res.status, json }).toMatchObject({ status: 200 });
    return json;
  }
  const failure = async (txId: string) => (await f.store.meta(txId))?.failure;
  const status = async (txId: string) =>
    (await (await f.request('GET', `${LR}/${txId}/status`, { key: KEYS.auditorA })).json()) as Record<string, unknown>;
  const navigate = async (txId: string, links: number) => {
    const res = await f.request('GET', `${LR}/${txId}/navigate?links=${links}`, { key: KEYS.auditorA });
    expect(res.status).toBe(200);
    return (await res.json()) as { txIds: string[]; endOfLinks: boolean; maxLinksRequestable: number };
  };
  const match = async (txId: string, body: string | Buffer, query = '') => {
    const res = await f.request('POST', `${LR}/${txId}/match${query}`, { body, key: KEYS.auditorA });
    return {
      status: res.status,
      json: (await res.json()) as { match: boolean; confirmation: unknown; errorCode?: string },
    };
  };

  it('create -> update -> update -> delete: tokens, updatable, content, match, navigate, confirmation', async () => {
    // create: SHA256 with a salt containing + (sent as %2B)
    const v1 = Buffer.from('version one');
    const created = await write(`${LR}?encode=SHA256(s%2B1)`, v1);
    const d1 = sha(Buffer.concat([Buffer.from('s+1'), v1]));
    expect(created.txId).toMatch(/^[0-9a-f]{64}$/);
    expect(created.updateToken).toMatch(/^utk_/);
    expect(created.encoding).toEqual([
      { contentType: 'application/octet-stream; event-encoded=SHA256', output: d1.toString('hex') },
    ]);
    expect(await status(created.txId)).toEqual({ confirmation: null, updatable: true, publication: 'pending' });

    let content = await f.request('GET', `${LR}/${created.txId}/content`, { key: KEYS.auditorA });
    expect(content.status).toBe(200);
    expect(Buffer.from(await content.arrayBuffer()).equals(d1)).toBe(true);
    expect(content.headers.get('content-type')).toBe('application/octet-stream; event-encoded=SHA256');
    expect(content.headers.get('content-length')).toBe('32');
    expect(content.headers.get('etag')).toBe(`"${created.txId}"`);

    // update 1 with its token: SHA256|Base64 (text), by another key of the same tenant
    const v2 = Buffer.from('version two');
    const u1 = await write(
      `${LR}/${created.txId}/update?encode=SHA256|Base64&updateToken=${created.updateToken}`,
      v2,
      KEYS.writerA2,
    );
    const b2 = sha(v2).toString('base64');
    expect(u1.encoding[1]).toEqual({ contentType: 'text/plain; event-encoded=SHA256|Base64', output: b2 });
    expect(u1.updateToken).not.toBe(created.updateToken);
    expect((await status(created.txId))['updatable']).toBe(false);
    expect((await status(u1.txId))['updatable']).toBe(true);

    const head = await f.request('HEAD', `${LR}/${u1.txId}/content`, { key: KEYS.auditorA });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/plain; event-encoded=SHA256|Base64');
    expect(head.headers.get('content-length')).toBe(String(b2.length));
    expect(head.headers.get('etag')).toBe(`"${u1.txId}"`);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    content = await f.request('GET', `${LR}/${u1.txId}/content`, { key: KEYS.auditorA });
    expect(await content.text()).toBe(b2);

    // update 2 without a token, by the owning tenant; unencoded
    const v3 = Buffer.from([0, 1, 2, 255]);
    const u2 = await write(`${LR}/${u1.txId}/update`, v3);
    expect(u2.encoding).toEqual([]);
    content = await f.request('GET', `${LR}/${u2.txId}/content`, { key: KEYS.auditorA });
    expect(content.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await content.arrayBuffer()).equals(v3)).toBe(true);

    // delete with the token of u2
    const delRes = await f.request('POST', `${LR}/${u2.txId}/delete?updateToken=${u2.updateToken}`);
    expect(delRes.status).toBe(200);
    const del = (await delRes.json()) as { txId: string };
    expect(Object.keys(del)).toEqual(['txId']);
    expect(await status(u2.txId)).toMatchObject({ updatable: false });
    expect(await status(del.txId)).toMatchObject({ updatable: false });
    const delContent = await f.request('GET', `${LR}/${del.txId}/content`, { key: KEYS.auditorA });
    expect(delContent.headers.get('content-length')).toBe('0');

    // stored chain
    expect(await f.store.chain(created.txId)).toEqual([created.txId, u1.txId, u2.txId, del.txId]);

    // match
    expect((await match(created.txId, v1, '?encode=SHA256(s%2B1)')).json.match).toBe(true);
    expect((await match(created.txId, v1)).json.match).toBe(false); // salt not given: different hash
    expect((await match(created.txId, Buffer.from('version 1'), '?encode=SHA256(s%2B1)')).json.match).toBe(false);
    expect((await match(created.txId, v1, `?encode=SHA256(s%2B1)&prevTxId=${u1.txId}`)).json.match).toBe(false);
    expect((await match(u1.txId, v2, `?prevTxId=${created.txId}`)).json.match).toBe(true); // encode omitted: no salt used
    expect((await match(u1.txId, v2, `?encode=SHA256&prevTxId=${created.txId}`)).json.match).toBe(false); // encoding differs
    expect((await match(u1.txId, v2, `?prevTxId=${u2.txId}`)).json.match).toBe(false); // wrong link
    expect(await match(u1.txId, v2)).toMatchObject({ status: 400, json: { errorCode: 'PREV_TX_ID_PARAM_MISSING' } });
    expect(await match(u1.txId, v2, '?prevTxId=xyz')).toMatchObject({
      status: 400,
      json: { errorCode: 'TX_ID_PARAM_INVALID' },
    });
    expect((await match(u2.txId, v3, `?prevTxId=${u1.txId}`)).json).toEqual({ match: true, confirmation: null });
    const delMatch = await f.request('POST', `${LR}/${del.txId}/match?prevTxId=${u2.txId}`, { key: KEYS.auditorA });
    expect(await delMatch.json()).toEqual({ match: true, confirmation: null });

    // navigate (MAX_LINKS = 5)
    expect(await navigate(created.txId, 2)).toEqual({
      txIds: [u1.txId, u2.txId],
      endOfLinks: false,
      maxLinksRequestable: 5,
    });
    expect(await navigate(created.txId, 3)).toEqual({
      txIds: [u1.txId, u2.txId, del.txId],
      endOfLinks: true,
      maxLinksRequestable: 5,
    });
    expect(await navigate(created.txId, 5)).toMatchObject({ txIds: [u1.txId, u2.txId, del.txId], endOfLinks: true });
    expect(await navigate(del.txId, -2)).toMatchObject({ txIds: [u2.txId, u1.txId], endOfLinks: false });
    expect(await navigate(del.txId, -5)).toMatchObject({ txIds: [u2.txId, u1.txId, created.txId], endOfLinks: true });
    expect(await navigate(created.txId, -1)).toMatchObject({ txIds: [], endOfLinks: true });
    expect(await navigate(del.txId, 1)).toMatchObject({ txIds: [], endOfLinks: true });
    expect(await navigate(u1.txId, 1)).toMatchObject({ txIds: [u2.txId], endOfLinks: false });

    // the chain's end is a delete: no further update
    const again = await f.request('POST', `${LR}/${del.txId}/update`, { body: 'x' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { errorCode: string }).errorCode).toBe('NOT_LINKED_RECORDS_END');

    // publish (real BullMQ worker, ARC over HTTP to the devnet node) in chain order, mine two
    // blocks, and check the confirmation and proof
    f.startPublisher();
    const all = [created.txId, u1.txId, u2.txId, del.txId];
    await eventually(
      async () => (await Promise.all(all.map((t) => f.store.state(t)))).every((s) => s === 'published'),
      15_000,
    );
    expect(await f.store.outboxSize()).toBe(0);
    // published on ACCEPTED_BY_NETWORK; the node reports SEEN_ON_NETWORK after its time to SEEN
    for (const t of all) await eventually(async () => (await f.arcStatus(t))?.txStatus === 'SEEN_ON_NETWORK');
    // each successor really spends its previous record's link output (input 0), and the node accepted it
    for (const [prev, next] of [
      [created.txId, u1.txId],
      [u1.txId, u2.txId],
      [u2.txId, del.txId],
    ] as const) {
      const input = Transaction.fromBinary((await f.store.publication(next))?.rawTx ?? []).inputs[0];
      expect([input?.sourceTXID, input?.sourceOutputIndex]).toEqual([prev, 2]);
    }
    const mined = await f.produceBlock();
    expect(mined.txIds.filter((t) => all.includes(t))).toEqual(all); // in chain order
    await f.produceBlock();
    const st = (await status(u1.txId)) as {
      confirmation: {
        confirmedBlocks: number;
        blockHash: string;
        blockTimestamp: string;
        merkleProof: { index: number; txOrId: string; target: string; nodes: string[] };
      };
    };
    expect(st).toMatchObject({ updatable: false, publication: 'published' });
    const c = st.confirmation;
    expect(c.confirmedBlocks).toBe(2);
    expect(c.blockHash).toBe(mined.hash);
    expect(c.blockTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(c.merkleProof).toMatchObject({
      txOrId: u1.txId,
      targetType: 'header',
      proofType: 'branch',
      composite: false,
    });
    // independent check: block hash = reversed sha256d(header); fold the nodes to the header's root
    const header = Buffer.from(c.merkleProof.target, 'hex');
    expect(header.length).toBe(80);
    expect(c.blockHash).toBe(
      Buffer.from(sha(sha(header)))
        .reverse()
        .toString('hex'),
    );
    expect(blockHash(c.merkleProof.target)).toBe(c.blockHash);
    let running = Buffer.from(u1.txId, 'hex').reverse();
    let index = c.merkleProof.index;
    for (const node of c.merkleProof.nodes) {
      const sibling = node === '*' ? running : Buffer.from(node, 'hex').reverse();
      running =
        index % 2 === 1 ? sha(sha(Buffer.concat([sibling, running]))) : sha(sha(Buffer.concat([running, sibling])));
      index = Math.floor(index / 2);
    }
    expect(Buffer.from(running).reverse().toString('hex')).toBe(parseHeader(header).merkleRoot);
    const m = await match(u1.txId, v2, `?prevTxId=${created.txId}`);
    expect(m.json).toEqual({ match: true, confirmation: c });
  });

  it('50 concurrent updates of one record: exactly one wins, the chain has exactly one next', async () => {
    const root = await write(LR, 'race');
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        f.request('POST', `${LR}/${root.txId}/update?updateToken=${root.updateToken}`, { body: `u${i}` }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    const bodies = (await Promise.all(results.map((r) => r.json()))) as { txId?: string; errorCode?: string }[];
    expect(bodies.filter((b) => b.errorCode === 'NOT_LINKED_RECORDS_END')).toHaveLength(49);
    const winner = bodies.find((b) => b.txId)?.txId;
    expect(await f.store.chain(root.txId)).toEqual([root.txId, winner]);
    expect((await f.store.meta(root.txId))?.nextTxId).toBe(winner);
    // 2 records stored for this chain, not 51
    const recs = await keysMatching(f.redis, recordsKeys(f.prefix, '*').record('*'));
    const metas = await Promise.all(recs.map((k) => f.store.meta(k.split(':').pop() ?? '')));
    expect(metas.filter((m) => m?.chainId === root.txId)).toHaveLength(2);
    // and the node holds the winner, which spends the root's link output
    f.startPublisher();
    await eventually(async () => (await f.store.state(winner ?? '')) === 'published', 10_000);
    await eventually(async () => (await f.arcStatus(winner ?? ''))?.txStatus === 'SEEN_ON_NETWORK');
    const input = Transaction.fromBinary((await f.store.publication(winner ?? ''))?.rawTx ?? []).inputs[0];
    expect([input?.sourceTXID, input?.sourceOutputIndex]).toEqual([root.txId, 2]);
  });

  it('a competing spend already on the chain: ARC answers DOUBLE_SPEND_ATTEMPTED (pending), the update fails once the rival is mined, its successor fails too', async () => {
    f.startPublisher();
    const root = await write(LR, 'contested');
    await eventually(async () => (await f.store.state(root.txId)) === 'published', 10_000);
    // another spender of the root's link output reaches the devnet first (a real signed transaction)
    const meta = await f.store.meta(root.txId);
    expect(meta).toMatchObject({ linkVout: 2, linkSatoshis: expect.any(Number) });
    const rival = f.dev.chain.builder.build({
      kind: 'update',
      data: Buffer.from('rival'),
      contentType: 'application/octet-stream',
      spends: { txId: root.txId, vout: meta?.linkVout ?? -1, satoshis: meta?.linkSatoshis ?? -1 },
      funding: await f.spareFunding(1),
    });
    // held by ARC: SEEN_ON_NETWORK, or below it until the node's time to SEEN
    expect(await f.dev.chain.arc.submit(rival)).toMatchObject({
      kind: expect.stringMatching(/^(accepted|pending)$/),
      txId: rival.txId,
    });

    // the API accepts our update (it does not ask the chain); ARC answers DOUBLE_SPEND_ATTEMPTED,
    // which ARC documents ending MINED or REJECTED: published, unconfirmed, watched
    const lost = await write(`${LR}/${root.txId}/update?updateToken=${root.updateToken}`, 'ours');
    await eventually(async () => (await f.store.state(lost.txId)) === 'published', 10_000);
    expect(await status(lost.txId)).toMatchObject({ confirmation: null, publication: 'published' });
    // the rival is mined: ours is refused for good
    const block = await f.produceBlock();
    expect(block.txIds).toContain(rival.txId);
    expect(block.txIds).not.toContain(lost.txId);
    await eventually(async () => (await f.store.state(lost.txId)) === 'failed', 10_000);
    // the pass asked first (the rival MINED) or ARC already turned it REJECTED, naming the rival
    expect(await failure(lost.txId)).toMatch(
      /^(DOUBLE_SPEND: ARC DOUBLE_SPEND_ATTEMPTED|INVALID_TX: ARC REJECTED): .*(double spend|already spent by)/i,
    );
    expect(await failure(lost.txId)).toContain(rival.txId);
    // status says why: ARC's code and reason
    expect(await status(lost.txId)).toMatchObject({
      confirmation: null,
      publication: 'failed',
      failure: expect.stringMatching(/double spend|already spent by/i),
    });

    // a record linking to the rejected one can never be published either
    const next = await write(`${LR}/${lost.txId}/update?updateToken=${lost.updateToken}`, 'after');
    await eventually(async () => (await f.store.state(next.txId)) === 'failed', 10_000);
    expect(await failure(next.txId)).toMatch(/^PREVIOUS_REJECTED: /);
    expect(await status(next.txId)).toMatchObject({ confirmation: null, publication: 'failed' });
    expect(await f.store.outboxSize()).toBe(0);

    // the node mined the rival; ours is not in its mempool and the successor never reached it
    expect((await f.arcStatus(rival.txId))?.txStatus).toBe('MINED');
    expect((await f.arcStatus(lost.txId))?.txStatus ?? 'unknown').not.toMatch(/SEEN_ON_NETWORK|MINED/);
    expect(await f.arcStatus(next.txId)).toBeNull();
    expect((await status(root.txId))['confirmation']).toMatchObject({ blockHash: block.hash });
    expect((await status(lost.txId))['confirmation']).toBeNull();
    // the node agrees with the service: MINED in the same block, with a BUMP computing its root
    const arc = await f.arcStatus(root.txId);
    expect(arc).toMatchObject({ txStatus: 'MINED', blockHash: block.hash });
    const root2 = (await status(root.txId))['confirmation'] as { merkleProof: { target: string } };
    expect(MerklePath.fromHex(arc?.merklePath ?? '').computeRoot(root.txId)).toBe(
      parseHeader(Buffer.from(root2.merkleProof.target, 'hex')).merkleRoot,
    );
  });
});
