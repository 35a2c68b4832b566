/**
 * The node's checksig (the sdk's interpreter with libsecp256k1 doing the ECDSA equation) gives
 * the sdk's own verdict on every case: valid spends, a tampered output, another key's
 * signature, the high-S twin of a valid signature (in relaxed v2 scripts both accept it:
 * libsecp256k1 is given the normalised form), a corrupted signature.
 */
import {
  LockingScript,
  P2PKH,
  PublicKey,
  Signature,
  Spend,
  Transaction,
  TransactionSignature,
  UnlockingScript,
} from '@bsv/sdk';
import type { PrivateKey } from '@bsv/sdk';
import { cachePublicKeyParsing, withNativeChecksig } from './native-checksig';
import { SECP256K1_N as N, otherSigner as other, signerKey as key, signerLock as lock } from './node-test-kit';

function parent(satoshis = 5000): Transaction {
  const tx = new Transaction();
  tx.addInput({
    sourceTXID: 'ab'.repeat(32),
    sourceOutputIndex: 0,
    unlockingScript: new UnlockingScript(),
    sequence: 0xffffffff,
  });
  tx.addOutput({ satoshis, lockingScript: lock });
  return tx;
}

async function signedSpend(signer: PrivateKey = key, version = 1): Promise<Transaction> {
  const tx = new Transaction(version);
  tx.addInput({
    sourceTransaction: parent(),
    sourceOutputIndex: 0,
    unlockingScriptTemplate: new P2PKH().unlock(signer),
  });
  tx.addOutput({ satoshis: 4000, lockingScript: LockingScript.fromASM('OP_FALSE OP_RETURN 0102') });
  tx.addOutput({ satoshis: 900, lockingScript: lock });
  await tx.sign();
  return tx;
}

function spendOf(tx: Transaction, unlocking = tx.inputs[0]!.unlockingScript!): Spend {
  const input = tx.inputs[0]!;
  return new Spend({
    sourceTXID: input.sourceTXID ?? input.sourceTransaction!.id('hex'),
    sourceOutputIndex: 0,
    sourceSatoshis: 5000,
    lockingScript: lock,
    transactionVersion: tx.version,
    otherInputs: [],
    outputs: tx.outputs,
    unlockingScript: unlocking,
    inputSequence: input.sequence ?? 0xffffffff,
    inputIndex: 0,
    lockTime: tx.lockTime,
  });
}

/** [sdk verdict, node verdict]; a thrown script error counts as false. */
function verdicts(tx: Transaction, unlocking?: UnlockingScript): [boolean, boolean] {
  const run = (s: Spend) => {
    try {
      return s.validate();
    } catch {
      return false;
    }
  };
  return [run(spendOf(tx, unlocking)), run(withNativeChecksig(spendOf(tx, unlocking)))];
}

/** The unlocking script with its signature replaced by `sig` (same scope byte). */
function withSignature(tx: Transaction, make: (sig: TransactionSignature) => Signature): UnlockingScript {
  const [sigChunk, pubChunk] = tx.inputs[0]!.unlockingScript!.chunks;
  const sig = TransactionSignature.fromChecksigFormat(sigChunk!.data!);
  const replaced = make(sig);
  const bytes = [...replaced.toDER(), sig.scope] as number[];
  return new UnlockingScript([
    { op: bytes.length, data: bytes },
    { op: pubChunk!.op, data: pubChunk!.data! },
  ]);
}

describe('native checksig inside the sdk interpreter', () => {
  it('accepts what the sdk accepts: valid P2PKH spends', async () => {
    for (let i = 0; i < 5; i++) expect(verdicts(await signedSpend())).toEqual([true, true]);
  });

  it('refuses a spend whose outputs changed after signing', async () => {
    const tx = await signedSpend();
    tx.outputs[1]!.satoshis = 901;
    expect(verdicts(tx)).toEqual([false, false]);
  });

  it("refuses another key's signature over the same transaction", async () => {
    expect(verdicts(await signedSpend(other))).toEqual([false, false]);
  });

  it('gives the sdk verdict on the high-S twin of a valid signature: refused by strict (v1) scripts, accepted by relaxed (v2) ones', async () => {
    for (const version of [1, 2]) {
      const tx = await signedSpend(key, version);
      const high = withSignature(tx, (sig) => {
        const s = BigInt(`0x${sig.s.toHex()}`);
        const flipped = N - s;
        return new Signature(
          sig.r,
          new (sig.s.constructor as new (hex: string, base: number) => typeof sig.s)(flipped.toString(16), 16),
        );
      });
      expect(verdicts(tx, high)).toEqual(version === 1 ? [false, false] : [true, true]);
    }
  });

  it('refuses a signature with a changed r', async () => {
    const tx = await signedSpend();
    const bad = withSignature(tx, (sig) => new Signature(sig.r.addn(1), sig.s));
    expect(verdicts(tx, bad)).toEqual([false, false]);
  });

  it('with public keys cached, verdicts are unchanged and a bad key still fails', async () => {
    cachePublicKeyParsing();
    const tx = await signedSpend();
    expect(verdicts(tx)).toEqual([true, true]);
    expect(verdicts(tx)).toEqual([true, true]);
    const parsed = PublicKey.fromDER(key.toPublicKey().encode(true) as number[]);
    expect(parsed.toString()).toBe(key.toPublicKey().toString());
    expect(parsed).not.toBe(PublicKey.fromDER(key.toPublicKey().encode(true) as number[]));
    // an encoding the sdk refuses is refused every time (never cached)
    const bad = [0x05, ...new Array<number>(32).fill(0x11)];
    expect(() => PublicKey.fromDER(bad)).toThrow();
    expect(() => PublicKey.fromDER(bad)).toThrow();
    const [sigChunk] = tx.inputs[0]!.unlockingScript!.chunks;
    const wrongKey = new UnlockingScript([
      { op: sigChunk!.op, data: sigChunk!.data! },
      { op: 33, data: other.toPublicKey().encode(true) as number[] },
    ]);
    expect(verdicts(tx, wrongKey)).toEqual([false, false]);
  });
});
