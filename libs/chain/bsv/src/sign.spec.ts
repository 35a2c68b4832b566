import { createHash, randomBytes, randomInt } from 'node:crypto';
import { BigNumber, LockingScript, Signature, Spend, TransactionSignature } from '@bsv/sdk';
import type { TransactionInput, TransactionOutput, UnlockingScript } from '@bsv/sdk';
import { sha256d } from '@proofline/chain-domain';
import { deriveChainKeys } from './keys';
import type { SigningKey } from './keys';
import {
  SIGHASH_ALL_FORKID,
  dataScriptBytes,
  lockingScriptOf,
  p2pkhScriptBytes,
  sighashPreimage,
  signP2pkhInputs,
} from './scripts';
import type { SpentOutput } from './scripts';

const HALF_N = new BigNumber('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0', 16);

/** A random P2PKH-spending transaction: 1–3 inputs of random keys, outputs of random sizes. */
function randomTransaction(): {
  spent: SpentOutput[];
  outputs: TransactionOutput[];
  version: number;
  lockTime: number;
} {
  const inputs = randomInt(1, 4);
  const spent: SpentOutput[] = [];
  for (let i = 0; i < inputs; i++) {
    const key = deriveChainKeys(randomBytes(16).toString('hex')).funding;
    spent.push({
      txId: randomBytes(32).toString('hex'),
      vout: randomInt(0, 2 ** 31),
      // up to 21e14 sats: exercises both 32-bit halves of the 8-byte amount
      satoshis: randomInt(0, 2 ** 47) * (randomInt(0, 2) === 0 ? 1 : 14),
      lockingScript: lockingScriptOf(p2pkhScriptBytes(key.pubKeyHash)),
      key,
    });
  }
  // sizes around every varint boundary (0xfc/0xfd, 0xffff/0x10000)
  const sizes = [0, 1, 75, 252, 253, 300, 65_535, 65_536, 70_000];
  const outputs: TransactionOutput[] = [];
  for (let i = randomInt(1, 4); i > 0; i--) {
    const data = randomBytes(sizes[randomInt(0, sizes.length)] as number);
    outputs.push({ satoshis: randomInt(0, 2 ** 40), lockingScript: lockingScriptOf(dataScriptBytes([data])) });
  }
  return { spent, outputs, version: randomInt(1, 3), lockTime: randomInt(0, 2 ** 32) };
}

function spendOf(
  tx: ReturnType<typeof randomTransaction>,
  unlocks: UnlockingScript[],
  inputIndex: number,
  satoshis?: number,
): Spend {
  const inputs: TransactionInput[] = tx.spent.map((s, i) => ({
    sourceTXID: s.txId,
    sourceOutputIndex: s.vout,
    sequence: 0xffffffff,
    unlockingScript: unlocks[i],
  }));
  const s = tx.spent[inputIndex] as SpentOutput;
  return new Spend({
    sourceTXID: s.txId,
    sourceOutputIndex: s.vout,
    sourceSatoshis: satoshis ?? s.satoshis,
    lockingScript: LockingScript.fromHex(s.lockingScript.toHex()),
    transactionVersion: tx.version,
    otherInputs: inputs.filter((_, j) => j !== inputIndex),
    outputs: tx.outputs,
    inputIndex,
    unlockingScript: unlocks[inputIndex] as UnlockingScript,
    inputSequence: 0xffffffff,
    lockTime: tx.lockTime,
  });
}

/** The sdk's own preimage for the same input (the reference the Buffer version must equal). */
function sdkPreimage(tx: ReturnType<typeof randomTransaction>, inputIndex: number): Buffer {
  const bare: TransactionInput[] = tx.spent.map((s) => ({
    sourceTXID: s.txId,
    sourceOutputIndex: s.vout,
    sequence: 0xffffffff,
  }));
  const s = tx.spent[inputIndex] as SpentOutput;
  return Buffer.from(
    TransactionSignature.formatBytes({
      sourceTXID: s.txId,
      sourceOutputIndex: s.vout,
      sourceSatoshis: s.satoshis,
      transactionVersion: tx.version,
      otherInputs: bare.filter((_, j) => j !== inputIndex),
      outputs: tx.outputs,
      inputIndex,
      subscript: s.lockingScript,
      inputSequence: 0xffffffff,
      lockTime: tx.lockTime,
      scope: SIGHASH_ALL_FORKID,
    }),
  );
}

/** Splits `push(sig ‖ type) push(pubkey)`. */
function unlockParts(unlock: UnlockingScript): { der: Buffer; type: number; pub: Buffer } {
  const b = Buffer.from(unlock.toBinary());
  const sigLen = b[0] as number;
  const pubLen = b[1 + sigLen] as number;
  expect(b.length).toBe(2 + sigLen + pubLen);
  return { der: b.subarray(1, sigLen), type: b[sigLen] as number, pub: b.subarray(2 + sigLen) };
}

describe('signP2pkhInputs (libsecp256k1)', () => {
  it('loads the native libsecp256k1 binding, not the JavaScript fallback', () => {
    // the package falls back to elliptic (~10x slower) when its prebuilt binary does not load
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect(require('secp256k1')).toBe(require('secp256k1/bindings'));
  });

  it('signs random transactions of random keys so that the sdk interpreter accepts every input, DER low-S, like the sdk would', () => {
    for (let round = 0; round < 30; round++) {
      const tx = randomTransaction();
      const unlocks = signP2pkhInputs(tx.spent, tx.outputs, tx.version, tx.lockTime);
      expect(unlocks).toHaveLength(tx.spent.length);
      tx.spent.forEach((s, i) => {
        const preimage = sdkPreimage(tx, i);
        const parts = {
          version: tx.version,
          lockTime: tx.lockTime,
          hashPrevouts: sha256d(
            Buffer.concat(tx.spent.map((p) => Buffer.concat([Buffer.from(p.txId, 'hex').reverse(), u32(p.vout)]))),
          ),
          hashSequence: sha256d(Buffer.alloc(4 * tx.spent.length, 0xff)),
          hashOutputs: Buffer.from(preimage.subarray(preimage.length - 40, preimage.length - 8)),
        };
        expect(sighashPreimage(s, parts).equals(preimage)).toBe(true);

        const { der, type, pub } = unlockParts(unlocks[i] as UnlockingScript);
        expect(type).toBe(SIGHASH_ALL_FORKID);
        expect(pub.equals(Buffer.from(s.key.publicKey))).toBe(true);
        const sig = Signature.fromDER(Array.from(der));
        expect(Buffer.from(sig.toDER() as number[]).equals(der)).toBe(true); // strict, minimal DER
        expect(sig.s.cmp(HALF_N)).toBeLessThanOrEqual(0); // BIP62 low S
        // RFC 6979 on both sides: the very signature the sdk's JavaScript ECDSA makes
        const sdkSig = s.key.privateKey.sign(Array.from(createHash('sha256').update(preimage).digest()));
        expect(Buffer.from(sdkSig.toDER() as number[]).equals(der)).toBe(true);
        expect(spendOf(tx, unlocks, i).validate()).toBe(true);
      });
    }
  });

  it('makes signatures the interpreter rejects for another amount, another key or another output', () => {
    const tx = randomTransaction();
    const unlocks = signP2pkhInputs(tx.spent, tx.outputs, tx.version, tx.lockTime);
    const s = tx.spent[0] as SpentOutput;
    expect(() => spendOf(tx, unlocks, 0, s.satoshis + 1).validate()).toThrow();

    const other: SigningKey = deriveChainKeys('another seed').funding;
    const wrongKey = signP2pkhInputs([{ ...s, key: other }, ...tx.spent.slice(1)], tx.outputs, tx.version, tx.lockTime);
    expect(() => spendOf(tx, wrongKey, 0).validate()).toThrow();

    const changed = signP2pkhInputs(
      tx.spent,
      [...tx.outputs, { satoshis: 1, lockingScript: lockingScriptOf(Buffer.from([0x51])) }],
      tx.version,
      tx.lockTime,
    );
    expect(() => spendOf(tx, changed, 0).validate()).toThrow();
  });

  it('refuses amounts and txids a transaction cannot carry', () => {
    const tx = randomTransaction();
    const s = tx.spent[0] as SpentOutput;
    expect(() => signP2pkhInputs([{ ...s, satoshis: -1 }], tx.outputs, 1, 0)).toThrow(/satoshi/);
    expect(() => signP2pkhInputs([{ ...s, satoshis: 0.5 }], tx.outputs, 1, 0)).toThrow(/satoshi/);
    expect(() => signP2pkhInputs([{ ...s, txId: 'zz'.repeat(32) }], tx.outputs, 1, 0)).toThrow(/txid/);
  });
});

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}
