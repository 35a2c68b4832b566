import { merkleRoot, parseHeader } from '@proofline/chain-domain';
import { InMemoryChain } from './in-memory-chain';

// The double must behave like the devnet where unit specs rely on it: idempotent by txId,
// double spends and missing inputs rejected, mined transactions proven against a real header.
describe('InMemoryChain (test double of the chain ports)', () => {
  it('accepts once per txId, rejects a second spend and an unknown input, and mines with proofs', async () => {
    const chain = new InMemoryChain();
    const funding = [{ txId: 'fa'.repeat(32), vout: 0, satoshis: 1000 }];
    const root = chain.build({
      kind: 'create',
      data: Buffer.from('a'),
      contentType: 'application/octet-stream',
      funding,
    });
    expect(root.linkOutput).toEqual({ txId: root.txId, vout: 2, satoshis: 1 });
    const link = root.linkOutput ?? { txId: '', vout: 0, satoshis: 0 };
    const update = chain.build({ kind: 'update', data: Buffer.from('b'), spends: link, funding });
    const rival = chain.build({ kind: 'update', data: Buffer.from('c'), spends: link, funding });

    const seen = (txId: string) => ({ kind: 'accepted', txId, status: 'SEEN_ON_NETWORK', mined: null });
    expect(await chain.submit(update)).toEqual({
      kind: 'pending',
      txId: update.txId,
      status: 'SEEN_IN_ORPHAN_MEMPOOL',
      detail: `${root.txId}:2`,
    });
    expect(await chain.submit(root)).toEqual(seen(root.txId));
    expect(await chain.submit(root)).toEqual(seen(root.txId));
    expect(await chain.submit(update)).toEqual(seen(update.txId));
    expect(await chain.submit(rival)).toEqual({
      kind: 'refused',
      txId: rival.txId,
      code: 466,
      reason: `${root.txId}:2`,
      final: true,
      competingTxs: [update.txId],
    });
    expect(chain.accepted.get(root.txId)).toBe(1);

    expect(await chain.tipHeight()).toBe(-1);
    const block = chain.mine(new Date('2026-01-01T00:00:00Z'));
    expect(block.txIds.slice(1)).toEqual([root.txId, update.txId]);
    expect(parseHeader(block.header).merkleRoot).toBe(merkleRoot(block.txIds));
    expect(await chain.tipHeight()).toBe(0);
    const [inc, none] = await chain.inclusions([update.txId, rival.txId]);
    expect(inc).toMatchObject({
      blockHash: block.hash,
      blockHeight: 0,
      index: 2,
      proof: { txOrId: update.txId, target: block.header },
    });
    expect(none).toBeNull();
  });
});
