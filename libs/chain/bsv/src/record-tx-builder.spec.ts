import { LockingScript, SatoshisPerKilobyte, Spend, Transaction } from '@bsv/sdk';
import {
  InsufficientFundingError,
  extendedFromStandard,
  extensionOf,
  isExtendedFormat,
  spentTxIds,
  standardFromExtended,
  toExtendedFormat,
  withExtension,
} from '@proofline/chain-domain';
import type { Outpoint, RecordTxRequest } from '@proofline/chain-domain';
import {
  BsvSplitBuilder,
  BsvTransactionBuilder,
  DEV_CHAIN_SEED,
  InvalidTransactionError,
  buildCoinbase,
  deriveChainKeys,
  parseTransaction,
  pooledRandomBytes,
} from './index';
import type { BuiltRecordTransaction } from './index';

const keys = deriveChainKeys(DEV_CHAIN_SEED);
const builder = new BsvTransactionBuilder({ keys, satoshisPerKilobyte: 100 });
const text = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const hexOf = (s: string) => Buffer.from(s, 'utf8').toString('hex');
/** The hex the sdk and the parser read, of a built transaction's bytes. */
const rawHexOf = (built: { readonly rawTx: Uint8Array }) => Buffer.from(built.rawTx).toString('hex');

/** A pool UTXO paying the funding key (a fake parent txId: the interpreter checks signatures, not parents). */
const utxo = (satoshis: number, n = 1): Outpoint => ({ txId: n.toString(16).padStart(64, '0'), vout: n % 3, satoshis });

/** `request` funded by one pool UTXO of exactly `fundingNeeded`: no change output. */
const exactly = (request: Omit<RecordTxRequest, 'funding'>, n = 1): RecordTxRequest => ({
  ...request,
  funding: [utxo(builder.fundingNeeded(request), n)],
});

/** Pushes as they must appear: OP_FALSE OP_RETURN then minimal pushes. */
function expectedHeaderHex(kind: string, contentType: string, nonce: string): string {
  const push = (hex: string) => (hex.length === 0 ? '00' : (hex.length / 2).toString(16).padStart(2, '0') + hex);
  return `006a${push(hexOf('proofline'))}${push(hexOf(kind))}${push(hexOf('1'))}${push(hexOf(contentType))}${push(nonce)}`;
}

/** Runs the sdk's script interpreter on every input against the output it spends. */
function expectSignaturesValid(
  built: BuiltRecordTransaction,
  previousLink?: { satoshis: number; scriptHex: string },
): void {
  const tx = Transaction.fromHex(rawHexOf(built));
  tx.inputs.forEach((input, inputIndex) => {
    const isFunding = inputIndex === tx.inputs.length - 1;
    const source = isFunding
      ? { satoshis: built.funding.satoshis, scriptHex: built.funding.lockingScriptHex }
      : previousLink;
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
  const req = (r: Omit<RecordTxRequest, 'funding'>) => builder.buildDetailed(exactly(r));

  it('an independent record funded by one pool UTXO without change, parsable by the sdk', () => {
    const built = req({ kind: 'independent', data: text('hello'), contentType: 'text/plain' });
    const tx = Transaction.fromHex(rawHexOf(built));
    expect(tx.id('hex')).toBe(built.txId);
    expect(built.linkOutput).toBeNull();
    expect(tx.outputs).toHaveLength(2);
    expect(tx.outputs[0]?.lockingScript.toHex()).toBe(
      expectedHeaderHex('independent', 'text/plain', built.fundingNonce),
    );
    expect(tx.outputs[1]?.lockingScript.toHex()).toBe(`006a05${hexOf('hello')}`);
    expect(tx.outputs.map((o) => o.satoshis)).toEqual([0, 0]);
    expect(tx.inputs).toHaveLength(1);
    expect(tx.inputs[0]).toMatchObject({ sourceTXID: utxo(0).txId, sourceOutputIndex: utxo(0).vout });
    expectSignaturesValid(built);
  });

  it('links create -> update -> delete through output 2, each signed validly', async () => {
    const create = req({ kind: 'create', data: text('v1'), contentType: 'application/json' });
    const linkScript = builder.linkLockingScriptHex();
    expect(create.linkOutput).toEqual({ txId: create.txId, vout: 2, satoshis: 1 });
    const ctx = Transaction.fromHex(rawHexOf(create));
    expect(ctx.outputs).toHaveLength(3);
    expect(ctx.outputs[2]).toMatchObject({ satoshis: 1 });
    expect(ctx.outputs[2]?.lockingScript.toHex()).toBe(linkScript);
    expect(linkScript).toMatch(/^76a914[0-9a-f]{40}88ac$/);
    expectSignaturesValid(create);

    const update = req({
      kind: 'update',
      data: text('v2'),
      contentType: 'application/json',
      spends: create.linkOutput!,
    });
    const utx = Transaction.fromHex(rawHexOf(update));
    expect(utx.id('hex')).toBe(update.txId);
    expect(utx.inputs).toHaveLength(2);
    expect(utx.inputs[0]).toMatchObject({ sourceTXID: create.txId, sourceOutputIndex: 2 });
    expect(utx.inputs[1]).toMatchObject({ sourceTXID: utxo(0).txId, sourceOutputIndex: utxo(0).vout });
    expect(utx.outputs).toHaveLength(3);
    expect(update.linkOutput).toEqual({ txId: update.txId, vout: 2, satoshis: 1 });
    expectSignaturesValid(update, { satoshis: 1, scriptHex: linkScript });

    const del = req({ kind: 'delete', spends: update.linkOutput! });
    const dtx = Transaction.fromHex(rawHexOf(del));
    expect(dtx.id('hex')).toBe(del.txId);
    expect(del.linkOutput).toBeNull();
    expect(dtx.outputs).toHaveLength(1);
    expect(dtx.outputs[0]?.lockingScript.toHex()).toBe(expectedHeaderHex('delete', '', del.fundingNonce));
    expect(dtx.inputs[0]).toMatchObject({ sourceTXID: update.txId, sourceOutputIndex: 2 });
    expectSignaturesValid(del, { satoshis: 1, scriptHex: linkScript });

    // The fee covers the sdk's own SatoshisPerKilobyte computation of the signed tx.
    for (const [built, tx] of [
      [create, ctx],
      [update, utx],
      [del, dtx],
    ] as const) {
      const sdkFee = await new SatoshisPerKilobyte(100).computeFee(tx);
      expect(built.fee).toBeGreaterThanOrEqual(sdkFee);
      expect(built.fee - sdkFee).toBeLessThanOrEqual(1);
    }
  });

  it('rejects a signature when the spent amount differs (the preimage commits to it)', () => {
    const built = req({ kind: 'independent', data: text('x'), contentType: 'text/plain' });
    expect(() =>
      expectSignaturesValid({ ...built, funding: { ...built.funding, satoshis: built.funding.satoshis + 1 } }),
    ).toThrow();
  });

  it('uses large pushes for large records and a fee proportional to size', () => {
    const big = new Uint8Array(300_000).fill(7);
    const built = req({ kind: 'independent', data: big, contentType: 'application/octet-stream' });
    const tx = Transaction.fromHex(rawHexOf(built));
    expect(tx.outputs[1]?.lockingScript.toHex().slice(0, 14)).toBe('006a4ee0930400');
    const size = rawHexOf(built).length / 2;
    expect(built.fee).toBeGreaterThanOrEqual(Math.ceil((size / 1000) * 100));
    expect(built.fee).toBeLessThanOrEqual(Math.ceil(((size + 2) / 1000) * 100));
    expect(built.fee).toBeGreaterThan(30_000);
  });

  it('rejects requests that break the layout', () => {
    const link = { txId: 'a'.repeat(64), vout: 2, satoshis: 1 };
    const funding = [utxo(1000)];
    expect(() => builder.build({ kind: 'create', funding })).toThrow(/needs data/);
    expect(() => builder.build({ kind: 'delete', data: text('x'), spends: link, funding })).toThrow(/no data/);
    expect(() => builder.build({ kind: 'update', data: text('x'), funding })).toThrow(/must spend/);
    expect(() => builder.build({ kind: 'independent', data: text('x'), spends: link, funding })).toThrow(
      /must not spend/,
    );
    expect(() => builder.build({ kind: 'independent', data: text('x'), funding: [] })).toThrow(/at least one UTXO/);
  });

  it('derives the same keys from the same seed in every process, other keys from another seed', () => {
    const again = new BsvTransactionBuilder({ seed: DEV_CHAIN_SEED });
    expect(again.linkLockingScriptHex()).toBe(builder.linkLockingScriptHex());
    expect(new BsvTransactionBuilder({ seed: 'another' }).linkLockingScriptHex()).not.toBe(
      builder.linkLockingScriptHex(),
    );
    expect(builder.build(exactly({ kind: 'independent', data: text('a') })).txId).not.toBe(
      builder.build(exactly({ kind: 'independent', data: text('a') })).txId,
    );
  });
});

/**
 * Checks every input of a funded transaction with the sdk's interpreter against the output it
 * spends: the previous link output for input 0 of an update/delete, the pool UTXO (funding P2PKH
 * script and satoshis) for every funding input.
 */
function expectFundedInputsValid(rawHex: string, sources: readonly { satoshis: number; scriptHex: string }[]): void {
  const tx = Transaction.fromHex(rawHex);
  expect(tx.inputs).toHaveLength(sources.length);
  tx.inputs.forEach((input, inputIndex) => {
    const source = sources[inputIndex]!;
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

describe('BsvTransactionBuilder with pool funding', () => {
  const fundingScript = builder.fundingLockingScriptHex();
  const linkScript = builder.linkLockingScriptHex();
  const sumOut = (rawHex: string) => Transaction.fromHex(rawHex).outputs.reduce((n, o) => n + (o.satoshis ?? 0), 0);

  it('spends the pool UTXO after the link, returns change to the funding script and pays at least the rate', async () => {
    const rate = 250;
    const create = builder.build({
      kind: 'create',
      data: text('v1'),
      contentType: 'text/plain',
      funding: [utxo(1000, 1)],
      satoshisPerKilobyte: rate,
    });
    const ctx = Transaction.fromHex(rawHexOf(create));
    expect(ctx.inputs.map((i) => [i.sourceTXID, i.sourceOutputIndex])).toEqual([[utxo(1, 1).txId, 1]]);
    expect(create.fundingSpent).toEqual([utxo(1000, 1)]);
    expect(ctx.outputs).toHaveLength(4);
    expect(ctx.outputs[3]?.lockingScript.toHex()).toBe(fundingScript);
    expect(create.change).toEqual({ txId: create.txId, vout: 3, satoshis: ctx.outputs[3]?.satoshis });
    expect(1000 - sumOut(rawHexOf(create))).toBe(create.fee);
    expect(create.fee).toBeGreaterThanOrEqual(Math.ceil(((rawHexOf(create).length / 2) * rate) / 1000));
    expect(create.fee).toBeGreaterThanOrEqual(await new SatoshisPerKilobyte(rate).computeFee(ctx));
    expectFundedInputsValid(rawHexOf(create), [{ satoshis: 1000, scriptHex: fundingScript }]);

    const update = builder.build({
      kind: 'update',
      data: text('v2'),
      spends: create.linkOutput!,
      funding: [create.change!],
      satoshisPerKilobyte: rate,
    });
    const utx = Transaction.fromHex(rawHexOf(update));
    expect(utx.inputs[0]).toMatchObject({ sourceTXID: create.txId, sourceOutputIndex: 2 });
    expect(utx.inputs[1]).toMatchObject({ sourceTXID: create.txId, sourceOutputIndex: 3 });
    expect(update.change?.vout).toBe(3);
    expect(create.change!.satoshis + 1 - sumOut(rawHexOf(update))).toBe(update.fee);
    expectFundedInputsValid(rawHexOf(update), [
      { satoshis: 1, scriptHex: linkScript },
      { satoshis: create.change!.satoshis, scriptHex: fundingScript },
    ]);

    const del = builder.build({
      kind: 'delete',
      spends: update.linkOutput!,
      funding: [utxo(500, 2), utxo(700, 3)],
      satoshisPerKilobyte: rate,
    });
    const dtx = Transaction.fromHex(rawHexOf(del));
    expect(dtx.outputs).toHaveLength(2);
    expect(del.change).toEqual({ txId: del.txId, vout: 1, satoshis: 1201 - del.fee });
    expectFundedInputsValid(rawHexOf(del), [
      { satoshis: 1, scriptHex: linkScript },
      { satoshis: 500, scriptHex: fundingScript },
      { satoshis: 700, scriptHex: fundingScript },
    ]);
    // A wrong amount or a wrong script fails the interpreter (the check can fail).
    expect(() =>
      expectFundedInputsValid(rawHexOf(del), [
        { satoshis: 1, scriptHex: linkScript },
        { satoshis: 501, scriptHex: fundingScript },
        { satoshis: 700, scriptHex: fundingScript },
      ]),
    ).toThrow();
    expect(() =>
      expectFundedInputsValid(rawHexOf(del), [
        { satoshis: 1, scriptHex: linkScript },
        { satoshis: 500, scriptHex: linkScript },
        { satoshis: 700, scriptHex: fundingScript },
      ]),
    ).toThrow();
  });

  it('fundingNeeded is exactly enough: that much builds without change, one satoshi less is refused', () => {
    for (const rate of [1, 100, 5000]) {
      const request = {
        kind: 'independent' as const,
        data: new Uint8Array(2000).fill(1),
        contentType: 'x',
        satoshisPerKilobyte: rate,
      };
      const needed = builder.fundingNeeded(request);
      const exact = builder.build({ ...request, funding: [utxo(needed, 4)] });
      expect(exact.change).toBeNull();
      expect(exact.fee).toBe(needed);
      expect(exact.fee).toBeGreaterThanOrEqual(Math.ceil(((rawHexOf(exact).length / 2) * rate) / 1000));
      expect(() => builder.build({ ...request, funding: [utxo(needed - 1, 5)] })).toThrow(InsufficientFundingError);
    }
  });

  it('a surplus below the dust limit goes to the fee', () => {
    const dusty = new BsvTransactionBuilder({ keys, satoshisPerKilobyte: 100, dustLimit: 50 });
    const request = { kind: 'independent' as const, data: text('d') };
    const needed = dusty.fundingNeeded(request);
    const built = dusty.build({ ...request, funding: [utxo(needed + 40, 6)] });
    expect(built.change).toBeNull();
    expect(built.fee).toBe(needed + 40);
    const withChange = dusty.build({ ...request, funding: [utxo(needed + 200, 7)] });
    expect(withChange.change!.satoshis).toBeGreaterThanOrEqual(50);
  });
});

describe('Extended Format of record transactions', () => {
  it("EF parses back (the sdk as an independent reader) to the same txId, with each input's satoshis and script", () => {
    const create = builder.buildDetailed({ kind: 'create', data: text('v1'), funding: [utxo(5000, 4)] });
    const update = builder.buildDetailed({
      kind: 'update',
      data: text('v2'),
      spends: create.linkOutput!,
      funding: [create.change!, utxo(700, 5)],
    });
    const expected = [
      [{ satoshis: 5000, script: builder.fundingLockingScriptHex() }],
      [
        { satoshis: 1, script: builder.linkLockingScriptHex() },
        { satoshis: create.change!.satoshis, script: builder.fundingLockingScriptHex() },
        { satoshis: 700, script: builder.fundingLockingScriptHex() },
      ],
    ];
    [create, update].forEach((built, n) => {
      expect(isExtendedFormat(built.ef)).toBe(true);
      const ef = Transaction.fromHexEF(Buffer.from(built.ef).toString('hex'));
      expect(ef.id('hex')).toBe(built.txId);
      expect(ef.toHex()).toBe(rawHexOf(built));
      expect(
        ef.inputs.map((i) => {
          const out = i.sourceTransaction?.outputs[i.sourceOutputIndex];
          return { satoshis: out?.satoshis, script: out?.lockingScript.toHex() };
        }),
      ).toEqual(expected[n]);
      // The readers without the sdk: the record store's and the batcher's.
      expect(Buffer.from(standardFromExtended(built.ef)).toString('hex')).toBe(rawHexOf(built));
      expect(spentTxIds(built.ef)).toEqual(ef.inputs.map((i) => i.sourceTXID));
      expect(spentTxIds(built.rawTx)).toEqual(spentTxIds(built.ef));
      // What the record store keeps beside the raw transaction gives the same EF back.
      expect(Buffer.from(withExtension(built.rawTx, extensionOf(built.ef)))).toEqual(Buffer.from(built.ef));
      expect(() => withExtension(built.rawTx, extensionOf(built.ef).subarray(1))).toThrow();
      // The builder's EF from its standard bytes is the EF of the whole transaction written out.
      const spent = ef.inputs.map((i) => {
        const out = i.sourceTransaction!.outputs[i.sourceOutputIndex]!;
        return { satoshis: out.satoshis!, lockingScript: out.lockingScript };
      });
      expect(toExtendedFormat(ef, spent)).toEqual(Buffer.from(built.ef));
      expect(extendedFromStandard(built.rawTx, spent)).toEqual(Buffer.from(built.ef));
      expect(() => extendedFromStandard(built.rawTx, spent.slice(1))).toThrow();
    });
    // The standard serialization is not EF and reads back as itself.
    expect(isExtendedFormat(create.rawTx)).toBe(false);
    expect(standardFromExtended(create.rawTx)).toBe(create.rawTx);
    expect(() => standardFromExtended(create.ef.subarray(0, 60))).toThrow('truncated');
  });
});

describe('BsvSplitBuilder', () => {
  it('splits pool UTXOs into denomination outputs plus change, in raw and Extended Format, every input valid', () => {
    const split = new BsvSplitBuilder({ keys, satoshisPerKilobyte: 50 }).buildSplitTransaction({
      inputs: [utxo(50_000, 8), utxo(30_000, 9)],
      count: 40,
      satoshisEach: 1000,
    });
    const tx = Transaction.fromHex(split.rawHex);
    expect(tx.id('hex')).toBe(split.txId);
    expect(split.outputs).toHaveLength(40);
    expect(split.outputs.every((o, i) => o.vout === i && o.satoshis === 1000 && o.txId === split.txId)).toBe(true);
    expect(split.change).toEqual({ txId: split.txId, vout: 40, satoshis: 80_000 - 40_000 - split.fee });
    expect(split.fee).toBeGreaterThanOrEqual(Math.ceil(((split.rawHex.length / 2) * 50) / 1000));
    const ef = Transaction.fromHexEF(split.efHex);
    expect(ef.id('hex')).toBe(split.txId);
    expect(ef.toHex()).toBe(split.rawHex);
    const script = new BsvTransactionBuilder({ keys }).fundingLockingScriptHex();
    expect(tx.outputs.every((o) => o.lockingScript.toHex() === script)).toBe(true);
    expectFundedInputsValid(split.rawHex, [
      { satoshis: 50_000, scriptHex: script },
      { satoshis: 30_000, scriptHex: script },
    ]);
    expect(() =>
      new BsvSplitBuilder({ keys, satoshisPerKilobyte: 50 }).buildSplitTransaction({
        inputs: [utxo(1000, 10)],
        count: 1,
        satoshisEach: 1000,
      }),
    ).toThrow(expect.objectContaining({ name: 'InsufficientFundingError' }));
  });
});

describe('parseTransaction', () => {
  it('returns txId, outpoints, outputs and the decoded header', () => {
    const create = builder.buildDetailed(exactly({ kind: 'create', data: text('v1'), contentType: 'text/plain' }));
    const update = builder.buildDetailed(
      exactly({ kind: 'update', data: text('v2'), contentType: 'text/plain', spends: create.linkOutput! }, 2),
    );
    const p = parseTransaction(rawHexOf(update));
    expect(p.txId).toBe(update.txId);
    expect(p.isCoinbase).toBe(false);
    expect(p.inputs.map((i) => [i.txId, i.vout])).toEqual([
      [create.txId, 2],
      [utxo(0, 2).txId, utxo(0, 2).vout],
    ]);
    expect(p.outputs.map((o) => o.satoshis)).toEqual([0, 0, 1]);
    expect(p.recordHeader).toEqual({
      kind: 'update',
      version: '1',
      contentType: 'text/plain',
      fundingNonce: update.fundingNonce,
    });
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
    const rawHex = rawHexOf(builder.build(exactly({ kind: 'independent', data: text('x') })));
    expect(() => parseTransaction('zz')).toThrow(InvalidTransactionError);
    expect(() => parseTransaction('')).toThrow(InvalidTransactionError);
    expect(() => parseTransaction(rawHex.slice(0, -10))).toThrow(InvalidTransactionError);
    expect(() => parseTransaction(`${rawHex}00`)).toThrow(InvalidTransactionError);
  });
});

describe('pooledRandomBytes', () => {
  it('hands out fresh bytes of the asked length, never the same slice twice, across pool refills', () => {
    const random = pooledRandomBytes(64);
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const b = random(16);
      expect(b).toHaveLength(16);
      seen.add(b.toString('hex'));
    }
    expect(seen.size).toBe(100);
    expect(random(100)).toHaveLength(100); // larger than the pool: drawn directly
  });
});
