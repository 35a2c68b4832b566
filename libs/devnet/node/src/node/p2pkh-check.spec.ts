/**
 * The node's direct P2PKH check beside the sdk's own interpreter (pure sdk, no native ECDSA):
 * it accepts valid standard spends in strict (v1) and relaxed (v2) transactions, and it answers
 * "not the fast case" for every breach of a rule the interpreter applies, so that the interpreter
 * decides. The property that matters, checked on each case and on 600 mutated spends: the check
 * is never true where the interpreter is false.
 */
import { createHash, randomBytes } from 'node:crypto';
import { LockingScript, P2PKH, Signature, Spend, Transaction, TransactionSignature, UnlockingScript } from '@bsv/sdk';
import type { PrivateKey } from '@bsv/sdk';
import { ForkIdDigests, checkStandardP2pkh, strictDerToCompact } from './p2pkh-check';
import { readTransaction } from './tx-format';
import type { WireOutput } from './tx-format';
import { SECP256K1_N as N, otherSigner as other, signerKey as key, signerLock as lock } from './node-test-kit';

function parent(lockingScript: LockingScript, satoshis: number, tag: number): Transaction {
  const tx = new Transaction();
  tx.addInput({
    sourceTXID: tag.toString(16).padStart(2, '0').repeat(32),
    sourceOutputIndex: 0,
    unlockingScript: new UnlockingScript(),
    sequence: 0xffffffff,
  });
  tx.addOutput({ satoshis, lockingScript });
  return tx;
}

interface Case {
  readonly tx: Transaction;
  /** Per input: the output it spends. */
  readonly spent: { satoshis: number; lockingScript: LockingScript }[];
}

/** A spend of `inputs` P2PKH outputs of `key` (5000 sat each), signed by `signer` with the template's scope. */
async function signedSpend(
  options: {
    signer?: PrivateKey;
    version?: number;
    inputs?: number;
    scope?: 'all' | 'none' | 'single';
    anyoneCanPay?: boolean;
    sequence?: number;
  } = {},
): Promise<Case> {
  const { signer = key, version = 1, inputs = 1, scope = 'all', anyoneCanPay = false, sequence = 0xffffffff } = options;
  const tx = new Transaction(version, [], [], 7);
  const spent = [];
  for (let i = 0; i < inputs; i++) {
    tx.addInput({
      sourceTransaction: parent(lock, 5000, i + 1),
      sourceOutputIndex: 0,
      sequence,
      unlockingScriptTemplate: new P2PKH().unlock(signer, scope, anyoneCanPay),
    });
    spent.push({ satoshis: 5000, lockingScript: lock });
  }
  tx.addOutput({ satoshis: 0, lockingScript: LockingScript.fromASM('OP_FALSE OP_RETURN 0102') });
  tx.addOutput({ satoshis: 900 * inputs, lockingScript: lock });
  await tx.sign();
  return { tx, spent };
}

function sdkVerdict(c: Case, index: number, unlocking?: UnlockingScript): boolean {
  const { tx } = c;
  const input = tx.inputs[index]!;
  try {
    return new Spend({
      sourceTXID: input.sourceTXID ?? input.sourceTransaction!.id('hex'),
      sourceOutputIndex: input.sourceOutputIndex,
      sourceSatoshis: c.spent[index]!.satoshis,
      lockingScript: c.spent[index]!.lockingScript,
      transactionVersion: tx.version,
      otherInputs: tx.inputs.filter((_, j) => j !== index),
      outputs: tx.outputs,
      unlockingScript: unlocking ?? input.unlockingScript!,
      inputSequence: input.sequence ?? 0xffffffff,
      inputIndex: index,
      lockTime: tx.lockTime,
    }).validate();
  } catch {
    return false;
  }
}

function fastVerdict(c: Case, index: number, unlocking?: UnlockingScript): boolean {
  const wire = readTransaction(Buffer.from(serialize(c.tx, index, unlocking))).tx.wire;
  const spent: WireOutput = {
    satoshis: c.spent[index]!.satoshis,
    script: Buffer.from(c.spent[index]!.lockingScript.toBinary()),
  };
  return checkStandardP2pkh(wire, index, spent, new ForkIdDigests(wire));
}

/** [sdk, fast] for input `index`, optionally with its unlocking script replaced. */
function verdicts(c: Case, index = 0, unlocking?: UnlockingScript): [boolean, boolean] {
  return [sdkVerdict(c, index, unlocking), fastVerdict(c, index, unlocking)];
}

/** The transaction's bytes as it stands now (a fresh object: the sdk caches a transaction's serialization). */
function serialize(tx: Transaction, index: number, unlocking?: UnlockingScript): number[] {
  const inputs = tx.inputs.map((input, j) => ({
    sourceTXID: input.sourceTXID ?? input.sourceTransaction!.id('hex'),
    sourceOutputIndex: input.sourceOutputIndex,
    sequence: input.sequence ?? 0xffffffff,
    unlockingScript: j === index && unlocking ? unlocking : input.unlockingScript!,
  }));
  const outputs = tx.outputs.map((o) => ({ satoshis: o.satoshis ?? 0, lockingScript: o.lockingScript }));
  return new Transaction(tx.version, inputs, outputs, tx.lockTime).toBinary();
}

function chunksOf(c: Case, index = 0): { sig: number[]; pub: number[] } {
  const [sig, pub] = c.tx.inputs[index]!.unlockingScript!.chunks;
  return { sig: sig!.data!, pub: pub!.data! };
}

const pushes = (...items: number[][]): UnlockingScript =>
  new UnlockingScript(items.map((data) => ({ op: data.length, data })));

function withSignature(c: Case, make: (sig: TransactionSignature) => Signature, scope?: number): UnlockingScript {
  const { sig: raw, pub } = chunksOf(c);
  const sig = TransactionSignature.fromChecksigFormat(raw);
  return pushes([...make(sig).toDER(), scope ?? sig.scope] as number[], pub);
}

describe('the direct P2PKH check beside the sdk interpreter', () => {
  it('accepts valid standard spends, strict (v1) and relaxed (v2), one and three inputs, any sequence', async () => {
    for (const version of [1, 2]) {
      for (let i = 0; i < 3; i++) expect(verdicts(await signedSpend({ version }))).toEqual([true, true]);
      const three = await signedSpend({ version, inputs: 3, sequence: 5 });
      for (const index of [0, 1, 2]) expect(verdicts(three, index)).toEqual([true, true]);
    }
  });

  it('accepts an uncompressed public key whose HASH160 the output names', async () => {
    const uncompressed = key.toPublicKey().encode(false) as number[];
    const pkh = createHash('ripemd160')
      .update(createHash('sha256').update(Buffer.from(uncompressed)).digest())
      .digest();
    const uLock = new P2PKH().lock([...pkh]);
    const tx = new Transaction(1, [], [], 0);
    tx.addInput({
      sourceTransaction: parent(uLock, 5000, 9),
      sourceOutputIndex: 0,
      sequence: 0xffffffff,
      unlockingScriptTemplate: new P2PKH().unlock(key, 'all', false, 5000, uLock),
    });
    tx.addOutput({ satoshis: 4000, lockingScript: lock });
    await tx.sign();
    const c = { tx, spent: [{ satoshis: 5000, lockingScript: uLock }] };
    const { sig } = chunksOf(c);
    expect(verdicts(c, 0, pushes(sig, uncompressed))).toEqual([true, true]);
  });

  it('refuses what the interpreter refuses: changed outputs, amount, lock time, key or signer', async () => {
    const c = await signedSpend();
    c.tx.outputs[1]!.satoshis = 901;
    expect(verdicts(c)).toEqual([false, false]);

    const amount = await signedSpend();
    amount.spent[0]!.satoshis = 5001;
    expect(verdicts(amount)).toEqual([false, false]);

    const late = await signedSpend();
    late.tx.lockTime = 8;
    expect(verdicts(late)).toEqual([false, false]);

    expect(verdicts(await signedSpend({ signer: other }))).toEqual([false, false]);

    const swapped = await signedSpend();
    expect(verdicts(swapped, 0, pushes(chunksOf(swapped).sig, other.toPublicKey().encode(true) as number[]))).toEqual([
      false,
      false,
    ]);
  });

  it('leaves the high-S twin to the interpreter (strict scripts refuse it, relaxed ones accept it)', async () => {
    for (const version of [1, 2]) {
      const c = await signedSpend({ version });
      const high = withSignature(c, (sig) => {
        const flipped = N - BigInt(`0x${sig.s.toHex()}`);
        return new Signature(
          sig.r,
          new (sig.s.constructor as new (hex: string, base: number) => typeof sig.s)(flipped.toString(16), 16),
        );
      });
      expect(verdicts(c, 0, high)).toEqual([version === 2, false]);
    }
  });

  it('leaves every other hash type to the interpreter, valid or not', async () => {
    const cases = [
      await signedSpend({ scope: 'none' }),
      await signedSpend({ scope: 'single' }),
      await signedSpend({ anyoneCanPay: true }),
      await signedSpend({ scope: 'all', inputs: 2, anyoneCanPay: true }),
    ];
    for (const c of cases) expect(verdicts(c)).toEqual([true, false]);
    // ALL without FORKID: the digest differs, the interpreter refuses the signature
    const noForkId = await signedSpend();
    expect(
      verdicts(
        noForkId,
        0,
        withSignature(noForkId, (s) => s, TransactionSignature.SIGHASH_ALL),
      ),
    ).toEqual([false, false]);
  });

  it('leaves scripts outside the template to the interpreter: PUSHDATA1, an extra push, a non-P2PKH lock', async () => {
    const c = await signedSpend();
    const { sig, pub } = chunksOf(c);
    const pushdata1 = new UnlockingScript([
      { op: 0x4c, data: sig },
      { op: pub.length, data: pub },
    ]);
    const [sdkPushdata, fastPushdata] = verdicts(c, 0, pushdata1);
    expect(fastPushdata).toBe(false);
    expect(sdkPushdata).toBe(false); // strict scripts refuse a non-minimal push
    expect(
      verdicts(
        c,
        0,
        new UnlockingScript([
          { op: 1, data: [1] },
          { op: sig.length, data: sig },
          { op: pub.length, data: pub },
        ]),
      ),
    ).toEqual([false, false]);
    const bare = { tx: c.tx, spent: [{ satoshis: 5000, lockingScript: LockingScript.fromASM('OP_TRUE') }] };
    expect(fastVerdict(bare, 0)).toBe(false);
  });

  it('reads strict DER only (BIP66): padding, negative integers and bad lengths are not the fast case', () => {
    const r = Buffer.from(`01${'22'.repeat(31)}`, 'hex');
    const s = Buffer.from(`02${'33'.repeat(31)}`, 'hex');
    const der = (rb: Buffer, sb: Buffer, seqLen?: number) =>
      Buffer.concat([
        Buffer.from([0x30, seqLen ?? 4 + rb.length + sb.length, 0x02, rb.length]),
        rb,
        Buffer.from([0x02, sb.length]),
        sb,
      ]);
    const good = strictDerToCompact(der(r, s));
    expect(good?.toString('hex')).toBe(r.toString('hex') + s.toString('hex'));
    // a high r needs its zero byte, and is placed without it
    const high = Buffer.concat([Buffer.from([0]), Buffer.from(`81${'22'.repeat(31)}`, 'hex')]);
    expect(strictDerToCompact(der(high, s))?.subarray(0, 32).toString('hex')).toBe(`81${'22'.repeat(31)}`);
    expect(strictDerToCompact(der(Buffer.concat([Buffer.from([0]), r]), s))).toBeNull(); // padded r
    expect(strictDerToCompact(der(r, Buffer.concat([Buffer.from([0]), s])))).toBeNull(); // padded s
    expect(strictDerToCompact(der(Buffer.from(`81${'22'.repeat(31)}`, 'hex'), s))).toBeNull(); // negative r
    expect(strictDerToCompact(der(r, s, 70))).toBeNull(); // sequence length wrong
    expect(strictDerToCompact(Buffer.concat([der(r, s), Buffer.from([0])]))).toBeNull(); // trailing byte
    expect(strictDerToCompact(der(Buffer.alloc(0), s))).toBeNull(); // empty r
    expect(strictDerToCompact(der(Buffer.alloc(33, 0x11), s))).toBeNull(); // r of 33 bytes without a zero pad
  });

  it('is never true where the interpreter is false, over 600 mutated spends', async () => {
    const bases = [await signedSpend(), await signedSpend({ version: 2 }), await signedSpend({ inputs: 2 })];
    let fastTrue = 0;
    for (let round = 0; round < 600; round++) {
      const c = bases[round % bases.length]!;
      const index = round % c.tx.inputs.length;
      const bytes = Buffer.from(c.tx.inputs[index]!.unlockingScript!.toBinary());
      const mutation = round % 4;
      const at = randomBytes(2).readUInt16BE(0) % bytes.length;
      if (mutation === 0) bytes[at] = (bytes[at] as number) ^ (1 << (round % 8));
      else if (mutation === 1) bytes[at] = randomBytes(1)[0]!;
      // mutations 2 and 3 leave the script alone: the fast case must hold on the untouched spend
      const unlocking = UnlockingScript.fromBinary([...bytes]);
      const [sdk, fast] = verdicts(c, index, unlocking);
      if (fast) {
        fastTrue++;
        expect(sdk).toBe(true);
      }
    }
    expect(fastTrue).toBeGreaterThanOrEqual(300);
  });
});
