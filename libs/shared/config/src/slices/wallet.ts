import { intFrom, optionalHexKey } from '../parsers';
import { slice, variable } from '../variable';
import { NETWORK } from './chain';

/**
 * The wallet seed every devnet deployment shares unless WALLET_SEED is set. It MUST equal
 * @proofline/chain-bsv's DEV_CHAIN_SEED (a wallet spec checks it). Public, so refused outside
 * the devnet: anyone could spend what it holds.
 */
export const DEVNET_WALLET_SEED = 'proofline-devnet-seed-v1';

/** The funding wallet and its UTXO pool (libs/chain/wallet). */
export const wallet = slice(
  {
    network: NETWORK,
    wallet: {
      // Not 64 hex characters, so a WALLET_SEED that is set never equals it.
      seed: variable(
        'WALLET_SEED',
        'Key seed (64 hex characters); the public devnet seed when unset, which only the devnet accepts.',
        optionalHexKey.transform((v) => v ?? DEVNET_WALLET_SEED),
      ),
      utxoSatoshis: variable(
        'POOL_UTXO_SATS',
        'Denomination the splitter cuts large UTXOs into.',
        intFrom(2, 100_000_000).default(1000),
      ),
      lowWater: variable(
        'POOL_LOW_WATER',
        'Split when fewer usable UTXOs than this are free or pending.',
        intFrom(0, 1_000_000).default(2000),
      ),
      target: variable(
        'POOL_TARGET',
        'A split refills the pool up to this many usable UTXOs.',
        intFrom(1, 1_000_000).default(10000),
      ),
      feeFloorSatsPerKb: variable(
        'FEE_FLOOR_SATS_PER_KB',
        "Lowest fee rate ever paid, satoshis per 1000 bytes (the rate follows ARC's policy above it).",
        intFrom(0, 1_000_000).default(1),
      ),
      feePolicyMaxAgeMs: variable(
        'FEE_POLICY_MAX_AGE_MS',
        "How old ARC's last fetched fee policy (GET /v1/policy, fetched every 5 minutes) may be and still price writes; outside the devnet, writes answer 503 FEE_POLICY_UNKNOWN while none is this fresh.",
        intFrom(60_000, 604_800_000).default(3_600_000),
      ),
    },
  },
  (c) =>
    c.network !== 'devnet' && c.wallet.seed === DEVNET_WALLET_SEED
      ? {
          env: 'WALLET_SEED',
          message: `required when NETWORK is ${c.network} (generate one: openssl rand -hex 32, then fund its address)`,
        }
      : undefined,
  (c) =>
    c.wallet.target < c.wallet.lowWater
      ? { env: 'POOL_TARGET', message: `must be at least POOL_LOW_WATER (${c.wallet.lowWater})` }
      : undefined,
);
