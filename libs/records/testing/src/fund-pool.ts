import { randomBytes } from 'node:crypto';
import type { FundingPool, FundingUtxo } from '@proofline/chain-wallet';

/**
 * Adds `count` free UTXOs of `satoshis` each to a test's funding pool, with random (fake) parent
 * txIds, and returns them. For specs that write records but do not publish them to a real node:
 * the pool only tracks outpoints, and the builder signs for the funding key whatever the parent
 * (the devnet node refuses their spends: it knows no such parent).
 */
export async function fundPool(pool: FundingPool, count: number, satoshis: number): Promise<FundingUtxo[]> {
  const utxos: FundingUtxo[] = Array.from({ length: count }, () => ({
    txId: randomBytes(32).toString('hex'),
    vout: 0,
    satoshis,
  }));
  for (let i = 0; i < utxos.length; i += 1000) await pool.add(utxos.slice(i, i + 1000));
  return utxos;
}
