import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { devnetKeys, outpointField } from '@proofline/devnet';
import type { FundingPool, FundingUtxo } from '@proofline/chain-wallet';

export interface FundPoolOptions {
  /**
   * BRIDGE until the ARC path lands: also registers the UTXOs as spendable outputs of the OLD
   * in-process devnet (its `chain:outputs` hash under `prefix`), whose mempool rejects inputs it
   * does not know. Specs that publish to the old devnet pass it; others leave it out. Remove it
   * once publication goes through the devnet node's ARC API (which funds the pool by coinbases).
   */
  readonly oldDevnet?: { readonly redis: Redis; readonly prefix: string };
}

/**
 * Adds `count` free UTXOs of `satoshis` each to a test's funding pool, with random (fake) parent
 * txIds, and returns them. For specs that write records but do not publish them to a real node:
 * the pool only tracks outpoints, and the builder signs for the funding key whatever the parent.
 */
export async function fundPool(
  pool: FundingPool,
  count: number,
  satoshis: number,
  options: FundPoolOptions = {},
): Promise<FundingUtxo[]> {
  const utxos: FundingUtxo[] = Array.from({ length: count }, () => ({
    txId: randomBytes(32).toString('hex'),
    vout: 0,
    satoshis,
  }));
  for (let i = 0; i < utxos.length; i += 1000) await pool.add(utxos.slice(i, i + 1000));
  if (options.oldDevnet) {
    const { redis, prefix } = options.oldDevnet;
    const fields = utxos.flatMap((u) => [outpointField(u.txId, u.vout), String(u.satoshis)]);
    for (let i = 0; i < fields.length; i += 2000)
      await redis.hset(devnetKeys(prefix).outputs, ...fields.slice(i, i + 2000));
  }
  return utxos;
}
