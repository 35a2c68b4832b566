import { Transaction } from '@bsv/sdk';
import { sha256d, toDisplayHex } from '@proofline/chain-domain';
import type { ChainKeys } from './keys';
import { lockingScriptOf, p2pkhScriptBytes, pushData } from './scripts';
import { UnlockingScript } from '@bsv/sdk';

/** Regtest-like subsidy of every devnet block (fees are not added to it). */
export const DEVNET_SUBSIDY = 50 * 100_000_000;

/** Minimal little-endian script number (BIP34 height push). */
function scriptNum(n: number): Buffer {
  if (n === 0) return Buffer.alloc(0);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.push(v & 0xff);
  if (((bytes[bytes.length - 1] as number) & 0x80) !== 0) bytes.push(0);
  return Buffer.from(bytes);
}

/**
 * The coinbase transaction of a devnet block at `height`: BIP34 height push (so it is unique per
 * height), a P2PKH output of the subsidy to the miner key.
 */
export function buildCoinbase(
  height: number,
  keys: ChainKeys,
  tag = 'proofline devnet',
): { txId: string; rawHex: string } {
  return buildCoinbaseTo(height, Buffer.from(p2pkhScriptBytes(keys.miner.pubKeyHash)).toString('hex'), tag);
}

/**
 * The coinbase transaction of a devnet block at `height` paying the subsidy to any locking
 * script (the devnet node pays the service wallet's funding P2PKH, regtest-style). A different
 * `tag` gives a different coinbase, hence a different Merkle root (a reorg sibling block).
 */
export function buildCoinbaseTo(
  height: number,
  lockingScriptHex: string,
  tag = 'proofline devnet',
): { txId: string; rawHex: string } {
  const unlock = Buffer.concat([pushData(scriptNum(height)), pushData(Buffer.from(tag, 'utf8'))]);
  const tx = new Transaction(
    1,
    [
      {
        sourceTXID: '0'.repeat(64),
        sourceOutputIndex: 0xffffffff,
        sequence: 0xffffffff,
        unlockingScript: new UnlockingScript([], Uint8Array.from(unlock), undefined, false),
      },
    ],
    [
      {
        satoshis: DEVNET_SUBSIDY,
        lockingScript: lockingScriptOf(Uint8Array.from(Buffer.from(lockingScriptHex, 'hex'))),
      },
    ],
    0,
  );
  const raw = Buffer.from(tx.toUint8Array());
  return { txId: toDisplayHex(sha256d(raw)), rawHex: raw.toString('hex') };
}
