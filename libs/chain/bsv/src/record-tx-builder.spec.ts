import { LockingScript, SatoshisPerKilobyte, Spend, Transaction } from '@bsv/sdk';
import type { RecordTxRequest } from '@proofline/chain-domain';
import {
  BsvTransactionBuilder,
  DEV_CHAIN_SEED,
  InvalidTransactionError,
  buildCoinbase,
  deriveChainKeys,
  faucetTxId,
  parseTransaction,
} from './index';
import type { BuiltRecordTransaction } from './index';

const keys = deriveChainKeys(DEV_CHAIN_SEED);
const builder = new BsvTransactionBuilder({ keys, satoshisPerKilobyte: 100 });
const text = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const hexOf = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/** Pushes as they must appear: OP_FALSE OP_RETURN then minimal pushes. */
function expectedHeaderHex(kind: string, contentType: string, nonce: string): string {
  const push = (hex: string) => (hex.length === 0 ? '00' : (hex.length / 2).toString(16).padStart(2, '0') + hex);
  return `006a${push(hexOf('proofline'))}${push(hexOf(kind))}${push(hexOf('1'))}${push(hexOf(contentType))}${push(nonce)}`;
}

/** Runs the sdk's script interpreter on every input against the output it spends. */
function expectSignaturesValid(built: BuiltRecordTransaction, previousLink?: { satoshis: number; scriptHex: string }): void {
  const tx = Transaction.fromHex(built.rawHex);
  tx.inputs.forEach((input, inputIndex) => {
    const isFunding = inputIndex === tx.inputs.length - 1;
    const source = isFunding ? { satoshis: built.funding.satoshis, scriptHex: built.funding.lockingScriptHex } : previousLink;
    if (!source) throw new Error('no source for input');
    const spend = new Spend({
      sourceTXID: input.sourceTXID as string,
      sourceOutputIndex: input.sourceOutputIndex,
      sourceSatoshis: source.satoshis,
      lockingScript: LockingScript.fromHex(source.scriptHex),
      transactionVersion: tx.version,
      otherInputs: tx.inputs.filter((_, j) => j !== inputIndex),
      outputs: tx.outputs,
      inputIndex,
      unlockingScript: input.unlockingScript as NonNullable<typeof input.unlockingScript>,
      inputSequence: input.sequence ?? 0xffffffff,
      lockTime: tx.lockTime,
    });
    expect(spend.validate()).toBe(true);
  });
}

describe('BsvTransactionBuilder', () => {
  const req = (r: RecordTxRequest) => builder.buildDetailed(r);

  it('builds an independent record: header + data, funded by the faucet, parsable by the sdk', () => {
    const built = req({ kind: 'independent', data: text('hello'), contentType: 'text/plain' });
    const tx = Transaction.fromHex(built.rawHex);
    expect(tx.id('hex')).toBe(built.txId);
    expect(built.linkOutput).toBeNull();
    expect(tx.outputs).toHaveLength(2);
    expect(tx.outputs[0]?.lockingScript.toHex()).toBe(expectedHeaderHex('independent', 'text/plain', built.fundingNonce));
    expect(tx.outputs[1]?.lockingScript.toHex()).toBe(`006a05${hexOf('hello')}`);
    expect(tx.outputs.map((o) => o.satoshis)).toEqual([0, 0]);
    expect(tx.inputs).toHaveLength(1);
    expect(tx.inputs[0]).toMatchObject({ sourceTXID: faucetTxId(built.fundingNonce), sourceOutputIndex: 0 });
    expectSignaturesValid(built);
  });

  it('links create -> update -> delete through output 2, each signed validly', async () => {
    const create = req({ kind: 'create', data: text('v1'), contentType: 'application/json' });
    const linkScript = builder.linkLockingScriptHex();
    expect(create.linkOutput).toEqual({ txId: create.txId, vout: 2, satoshis: 1 });
    const ctx = Transaction.fromHex(create.rawHex);
    expect(ctx.outputs).toHaveLength(3);
    expect(ctx.outputs[2]).toMatchObject({ satoshis: 1 });
    expect(ctx.outputs[2]?.lockingScript.toHex()).toBe(linkScript);
    expect(linkScript).toMatch(/^76a914[0-9a-f]{40}88ac$/);
    expectSignaturesValid(create);

    const update = req({ kind: 'update', data: text('v2'), contentType: 'application/json', spends: create.linkOutput! });
    const utx = Transaction.fromHex(update.rawHex);
    expect(utx.id('hex')).toBe(update.txId);
    expect(utx.inputs).toHaveLength(2);
    expect(utx.inputs[0]).toMatchObject({ sourceTXID: create.txId, sourceOutputIndex: 2 });
    expect(utx.inputs[1]).toMatchObject({ sourceTXID: faucetTxId(update.fundingNonce), sourceOutputIndex: 0 });
    expect(utx.outputs).toHaveLength(3);
    expect(update.linkOutput).toEqual({ txId: update.txId, vout: 2, satoshis: 1 });
    expectSignaturesValid(update, { satoshis: 1, scriptHex: linkScript });

    const del = req({ kind: 'delete', spends: update.linkOutput! });
    const dtx = Transaction.fromHex(del.rawHex);
    expect(dtx.id('hex')).toBe(del.txId);
    expect(del.linkOutput).toBeNull();
    expect(dtx.outputs).toHaveLength(1);
    expect(dtx.outputs[0]?.lockingScript.toHex()).toBe(expectedHeaderHex('delete', '', del.fundingNonce));
    expect(dtx.inputs[0]).toMatchObject({ sourceTXID: update.txId, sourceOutputIndex: 2 });
    expectSignaturesValid(del, { satoshis: 1, scriptHex: linkScript });

    // The fee the faucet pays covers the sdk's own SatoshisPerKilobyte computation of the signed tx.
    for (const [built, tx] of [[create, ctx], [update, utx], [del, dtx]] as const) {
      const sdkFee = await new SatoshisPerKilobyte(100).computeFee(tx);
      expect(built.fee).toBeGreaterThanOrEqual(sdkFee);
      expect(built.fee - sdkFee).toBeLessThanOrEqual(1);
    }
  });

  it('rejects a signature when the spent amount differs (the preimage commits to it)', () => {
    const built = req({ kind: 'independent', data: text('x'), contentType: 'text/plain' });
    expect(() => expectSignaturesValid({ ...built, funding: { ...built.funding, satoshis: built.funding.satoshis + 1 } })).toThrow();
  });

  it('uses large pushes for large records and a fee proportional to size', () => {
    const big = new Uint8Array(300_000).fill(7);
    const built = req({ kind: 'independent', data: big, contentType: 'application/octet-stream' });
    const tx = Transaction.fromHex(built.rawHex);
    expect(tx.outputs[1]?.lockingScript.toHex().slice(0, 14)).toBe('006a4ee0930400');
    const size = built.rawHex.length / 2;
    expect(built.fee).toBeGreaterThanOrEqual(Math.ceil((size / 1000) * 100));
    expect(built.fee).toBeLessThanOrEqual(Math.ceil(((size + 2) / 1000) * 100));
    expect(built.fee).toBeGreaterThan(30_000);
  });

  it('rejects requests that break the layout', () => {
    const link = { txId: 'a'.repeat(64), vout: 2, satoshis: 1 };
    expect(() => builder.build({ kind: 'create' })).toThrow(/needs data/);
    expect(() => builder.build({ kind: 'delete', data: text('x'), spends: link })).toThrow(/no data/);
    expect(() => builder.build({ kind: 'update', data: text('x') })).toThrow(/must spend/);
    expect(() => builder.build({ kind: 'independent', data: text('x'), spends: link })).toThrow(/must not spend/);
  });

  it('derives the same keys from the same seed in every process, other keys from another seed', () => {
    const again = new BsvTransactionBuilder({ seed: DEV_CHAIN_SEED });
    expect(again.linkLockingScriptHex()).toBe(builder.linkLockingScriptHex());
    expect(new BsvTransactionBuilder({ seed: 'another' }).linkLockingScriptHex()).not.toBe(builder.linkLockingScriptHex());
    expect(builder.build({ kind: 'independent', data: text('a') }).txId).not.toBe(builder.build({ kind: 'independent', data: text('a') }).txId);
  });
});

describe('parseTransaction', () => {
  it('returns txId, outpoints, outputs and the decoded header', () => {
    const create = builder.buildDetailed({ kind: 'create', data: text('v1'), contentType: 'text/plain' });
    const update = builder.buildDetailed({ kind: 'update', data: text('v2'), contentType: 'text/plain', spends: create.linkOutput! });
    const p = parseTransaction(update.rawHex);
    expect(p.txId).toBe(update.txId);
    expect(p.isCoinbase).toBe(false);
    expect(p.inputs.map((i) => [i.txId, i.vout])).toEqual([[create.txId, 2], [faucetTxId(update.fundingNonce), 0]]);
    expect(p.outputs.map((o) => o.satoshis)).toEqual([0, 0, 1]);
    expect(p.recordHeader).toEqual({ kind: 'update', version: '1', contentType: 'text/plain', fundingNonce: update.fundingNonce });
  });

  it('parses a coinbase', () => {
    const cb = buildCoinbase(7, keys);
    const p = parseTransaction(cb.rawHex);
    expect(p.txId).toBe(cb.txId);
    expect(Transaction.fromHex(cb.rawHex).id('hex')).toBe(cb.txId);
    expect(p.isCoinbase).toBe(true);
    expect(p.inputs[0]?.unlockingScriptHex.startsWith('0107')).toBe(true);
    expect(p.recordHeader).toBeNull();
    expect(buildCoinbase(8, keys).txId).not.toBe(cb.txId);
  });

  it('rejects garbage, truncation and trailing bytes', () => {
    const { rawHex } = builder.build({ kind: 'independent', data: text('x') });
    expect(() => parseTransaction('zz')).toThrow(InvalidTransactionError);
    expect(() => parseTransaction('')).toThrow(InvalidTransactionError);
    expect(() => parseTransaction(rawHex.slice(0, -10))).toThrow(InvalidTransactionError);
    expect(() => parseTransaction(`${rawHex}00`)).toThrow(InvalidTransactionError);
  });
});
