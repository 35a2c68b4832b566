import type { RedisClient } from '@proofline/shared-redis';
import { ArcClient } from '@proofline/chain-arc';
import { BsvSplitBuilder, deriveChainKeys } from '@proofline/chain-bsv';
import type { Clock, ResolvedConfig } from '@proofline/shared-config';
import { arcFeePolicy, arcSubmitPort } from './arc-ports';
import { CoinbaseScanner, httpCoinbaseSource } from './coinbase-scan';
import { FeeRateCache } from './fee-rate';
import { walletKeys } from './funding-pool';
import { createFundingWallet } from './funding-wallet';
import type { FundingWallet } from './funding-wallet';
import type { SubmitPort } from './ports';
import { Splitter } from './splitter';
import type { LowWaterRequest } from './splitter';
import type { UpkeepDeps } from './wallet-upkeep';

/**
 * Coinbase maturity the devnet scan uses: the coinbase of block h is imported once the tip is at
 * least h + 1 (one block on top). It MUST NOT be lower than the devnet node's own rule
 * (`COINBASE_MATURITY` = 2 of the node), or the splitter would spend a coinbase the node still
 * calls immature (462).
 */
export const DEVNET_COINBASE_MATURITY = 2;

/** The wallet's upkeep, split and fee parts as the worker and the CLI wire them from the configuration. */
export interface WalletServices {
  readonly wallet: FundingWallet;
  /** ARC's fee policy, cached (floor while ARC is unreachable). */
  readonly fees: FeeRateCache;
  /** The splitter's submit port on the ARC client (`ARC_URL`, `ARC_API_KEY`). */
  readonly submit: SubmitPort;
  /** `POOL_LOW_WATER`, `POOL_TARGET`, `POOL_UTXO_SATS`. */
  readonly lowWater: LowWaterRequest;
  /** A splitter paying the fee rate of the freshest policy (fetches it first; never throws for ARC). */
  splitter(): Promise<Splitter>;
  /** What one upkeep run needs: pool, splitter, and on the devnet the coinbase scanner (`HEADERS_URL`). */
  upkeepDeps(): Promise<UpkeepDeps>;
}

/**
 * Builds the wallet's services on an injected command connection: the pool (WALLET_SEED's funding
 * address), an ARC client for the splitter and the fee policy, the split builder signing with
 * the funding key, and on `NETWORK=devnet` the coinbase scanner reading the devnet node at
 * `HEADERS_URL`. Opens no connection; the ARC client is plain `fetch`.
 */
export function createWalletServices(redis: RedisClient, config: ResolvedConfig, clock?: Clock): WalletServices {
  const wallet = createFundingWallet(redis, config, clock);
  const chain = config.chain;
  const arc = new ArcClient({
    url: chain.arcUrl,
    ...(chain.arcApiKey ? { apiKey: chain.arcApiKey } : {}),
    timeoutMs: chain.arcTimeoutMs,
  });
  // The splitter is never refused for want of a policy (it fetches one first); it shares what it fetched.
  const fees = new FeeRateCache({
    fetchPolicy: arcFeePolicy(arc),
    floorSatsPerKb: config.wallet.feeFloorSatsPerKb,
    maxAgeMs: config.wallet.feePolicyMaxAgeMs,
    shared: { redis, key: walletKeys(config.redisPrefix).feePolicy },
  });
  const submit = arcSubmitPort(arc);
  const keys = deriveChainKeys(config.wallet.seed);
  const scanner =
    config.network === 'devnet'
      ? new CoinbaseScanner({
          pool: wallet.pool,
          source: httpCoinbaseSource({ baseUrl: chain.headersUrl, timeoutMs: chain.arcTimeoutMs }),
          fundingScriptHex: wallet.identity.lockingScriptHex,
          maturity: DEVNET_COINBASE_MATURITY,
        })
      : null;
  const splitter = async () => {
    await fees.refresh();
    const satoshisPerKilobyte = fees.current();
    return new Splitter({
      pool: wallet.pool,
      builder: new BsvSplitBuilder({ keys, satoshisPerKilobyte }),
      submit,
      status: (txId) => arc.status(txId),
      satoshisPerKilobyte,
    });
  };
  return {
    wallet,
    fees,
    submit,
    lowWater: {
      lowWater: config.wallet.lowWater,
      target: config.wallet.target,
      satoshisEach: config.wallet.utxoSatoshis,
    },
    splitter,
    upkeepDeps: async () => ({ pool: wallet.pool, splitter: await splitter(), scanner }),
  };
}
