import { deriveChainKeys } from '@proofline/chain-bsv';
import type { ChainKeys } from '@proofline/chain-bsv';

/** The networks a deployment can publish to. The devnet uses testnet addresses, like regtest. */
export type WalletNetwork = 'devnet' | 'testnet' | 'mainnet';

/** The funding key's identity: where deposits and the devnet's coinbase go. */
export interface FundingIdentity {
  /** Base58Check P2PKH address (mainnet prefix 0x00; testnet and devnet 0x6f). */
  readonly address: string;
  /** Hex of the P2PKH locking script every pool UTXO is locked by. */
  readonly lockingScriptHex: string;
  readonly pubKeyHashHex: string;
}

/** Derives the funding address and script from a wallet seed (or already derived keys). */
export function fundingIdentity(seedOrKeys: string | ChainKeys, network: WalletNetwork): FundingIdentity {
  const keys = typeof seedOrKeys === 'string' ? deriveChainKeys(seedOrKeys) : seedOrKeys;
  const pubKeyHashHex = Buffer.from(keys.funding.pubKeyHash).toString('hex');
  return {
    address: keys.funding.privateKey.toAddress(network === 'mainnet' ? 'mainnet' : 'testnet'),
    lockingScriptHex: `76a914${pubKeyHashHex}88ac`,
    pubKeyHashHex,
  };
}
