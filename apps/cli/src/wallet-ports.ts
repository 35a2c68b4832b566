import type { ResolvedConfig } from '@proofline/shared-config';
import type { RedisClient } from '@proofline/shared-redis';
import { createWalletServices } from '@proofline/chain-wallet';
import type { Splitter } from '@proofline/chain-wallet';

/**
 * The splitter `wallet split` runs: the same wiring as the worker's wallet role (split builder
 * signing with WALLET_SEED's funding key, ARC client on ARC_URL / ARC_API_KEY, fee rate from
 * ARC's policy or FEE_FLOOR_SATS_PER_KB while ARC is unreachable).
 */
export function cliSplitter(redis: RedisClient, config: ResolvedConfig): Promise<Splitter> {
  return createWalletServices(redis, config).splitter();
}
