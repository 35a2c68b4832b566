import { createHash } from 'node:crypto';
import { Transaction, Utils } from '@bsv/sdk';
import { REGTEST_BITS, buildBranchProofs, merkleRoot, parseHeader, serializeHeader } from '@proofline/chain-domain';
import { BsvSpvCodec, BsvTransactionBuilder, DEV_CHAIN_SEED, deriveChainKeys } from './index';

const codec = new BsvSpvCodec();
const builder = new BsvTransactionBuilder({ keys: deriveChainKeys(DEV_CHAIN_SEED), satoshisPerKilobyte: 100 });
/** A pool UTXO (a fake parent: the builder signs for the funding key whatever the parent). */
const funding = [{ txId: 'fa'.repeat(32), vout: 0, satoshis: 100_000 }];
const filler = (n: number) =>
  Array.from({ length: n }, (_, i) => createHash('sha256').update(`filler-${i}`).digest('hex'));

describe('BsvSpvCodec (receipts: Atomic BEEF, record data)', () => {
  it.each([0, 1, 4, 6])('round-trips a record transaction at index %i of a block through the sdk', (index) => {
    const tx = builder.build({
      kind: 'independent',
      data: new Uint8Array(Buffer.from('receipt me')),
      contentType: 'text/plain',
      funding,
    });
    const txIds = filler(7);
    txIds.splice(index, 0, tx.txId);
    const header = serializeHeader({
      version: 0x20000000,
      prevHash: '0'.repeat(64),
      merkleRoot: merkleRoot(txIds),
      time: 1_800_000_000,
      bits: REGTEST_BITS,
      nonce: 0,
    }).toString('hex');
    const proof = buildBranchProofs(txIds, header)[index];
    if (!proof) throw new Error('no proof');
    const beef = codec.toBeef({ rawTx: tx.rawTx, proof, blockHeight: 321 });
    expect(beef.startsWith(`01010101${Buffer.from(tx.txId, 'hex').reverse().toString('hex')}`)).toBe(true);

    // Independently through the sdk: the same transaction, a path to the header's root, canonical bytes.
    const parsed = Transaction.fromAtomicBEEF(Utils.toArray(beef, 'hex'));
    expect(parsed.id('hex')).toBe(tx.txId);
    expect(parsed.merklePath?.blockHeight).toBe(321);
    expect(parsed.merklePath?.computeRoot(tx.txId)).toBe(parseHeader(header).merkleRoot);
    expect(Utils.toHex(parsed.toAtomicBEEF())).toBe(beef);

    expect(codec.readBeef(beef)).toEqual({
      txId: tx.txId,
      rawTx: Buffer.from(tx.rawTx).toString('hex'),
      blockHeight: 321,
      merkleRoot: parseHeader(header).merkleRoot,
    });
    expect(codec.recordData(Buffer.from(tx.rawTx).toString('hex'))).toEqual({
      data: Buffer.from('receipt me'),
      contentType: 'text/plain',
    });
  });

  it('refuses what is not a BEEF; a delete has no data output', () => {
    expect(() => codec.readBeef('zz')).toThrow();
    expect(() => codec.readBeef('0101010100')).toThrow();
    const created = builder.build({ kind: 'create', data: new Uint8Array([1, 2]), funding });
    if (!created.linkOutput) throw new Error('a create has a link output');
    const deleted = builder.build({ kind: 'delete', spends: created.linkOutput, funding });
    expect(codec.recordData(Buffer.from(deleted.rawTx).toString('hex')).data).toBeNull();
  });
});
