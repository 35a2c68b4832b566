import type { TransactionOutput } from '@bsv/sdk';
import { InsufficientFundingError } from '@proofline/chain-domain';
import type { Outpoint } from '@proofline/chain-domain';
import { deriveChainKeys } from './keys';
import type { ChainKeys } from './keys';
import { lockingScriptOf, p2pkhScriptBytes, signTransaction } from './scripts';
import type { SpentOutput } from './scripts';

/** What the funding wallet's splitter asks for (the shape of chain-wallet's `SplitRequest`). */
export interface SplitTxRequest {
  /** Pool UTXOs paying the funding key. */
  readonly inputs: readonly Outpoint[];
  /** How many outputs of `satoshisEach`. */
  readonly count: number;
  readonly satoshisEach: number;
}

/** A signed split (the shape of chain-wallet's `BuiltSplit`). */
export interface BuiltSplitTx {
  readonly txId: string;
  readonly rawHex: string;
  /** Extended Format (BIP-239) hex: every input carries the satoshis and script it spends. */
  readonly efHex: string;
  readonly outputs: readonly Outpoint[];
  readonly change: Outpoint | null;
  readonly fee: number;
}

export interface BsvSplitBuilderOptions {
  readonly seed?: string;
  readonly keys?: ChainKeys;
  /** Fee rate, satoshis per 1000 bytes. */
  readonly satoshisPerKilobyte: number;
  /** Smallest change output worth creating (default 1 satoshi); less goes to the fee. */
  readonly dustLimit?: number;
}

const P2PKH_INPUT_MAX = 40 + 1 + 107;
const P2PKH_OUTPUT = 34;
const varIntSize = (n: number): number => (n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9);

/**
 * Builds and signs the funding wallet's split transactions: pool UTXOs in, `count` outputs of
 * `satoshisEach` plus change out, everything P2PKH to the funding key. Implements chain-wallet's
 * `SplitBuilder` port (structurally: chain-bsv does not depend on the wallet).
 * @throws InsufficientFundingError when the inputs cannot pay the outputs and the fee.
 */
export class BsvSplitBuilder {
  private readonly keys: ChainKeys;
  private readonly fundingScript: Buffer;
  private readonly dustLimit: number;

  constructor(private readonly options: BsvSplitBuilderOptions) {
    this.keys = options.keys ?? deriveChainKeys(options.seed);
    this.fundingScript = p2pkhScriptBytes(this.keys.funding.pubKeyHash);
    this.dustLimit = options.dustLimit ?? 1;
    if (!(options.satoshisPerKilobyte >= 0)) throw new Error('bad fee rate');
  }

  buildSplitTransaction(request: SplitTxRequest): BuiltSplitTx {
    const { inputs, count, satoshisEach } = request;
    if (inputs.length === 0) throw new Error('a split spends at least one UTXO');
    if (!Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(satoshisEach) || satoshisEach < 1)
      throw new Error('bad split count or denomination');
    const available = inputs.reduce((n, u) => n + u.satoshis, 0);
    const fee = (withChange: boolean) => {
      const outs = count + (withChange ? 1 : 0);
      const size =
        4 + varIntSize(inputs.length) + inputs.length * P2PKH_INPUT_MAX + varIntSize(outs) + outs * P2PKH_OUTPUT + 4;
      return Math.ceil((size * this.options.satoshisPerKilobyte) / 1000);
    };
    const paid = count * satoshisEach;
    const changeValue = available - paid - fee(true);
    const withChange = changeValue >= this.dustLimit;
    const actualFee = withChange ? fee(true) : available - paid;
    if (!withChange && actualFee < fee(false)) throw new InsufficientFundingError(paid + fee(false), available);

    const lock = lockingScriptOf(this.fundingScript);
    const outputs: TransactionOutput[] = Array.from({ length: count }, () => ({
      satoshis: satoshisEach,
      lockingScript: lock,
    }));
    if (withChange) outputs.push({ satoshis: changeValue, lockingScript: lock });
    const spent: SpentOutput[] = inputs.map((u) => ({
      txId: u.txId,
      vout: u.vout,
      satoshis: u.satoshis,
      lockingScript: lock,
      key: this.keys.funding,
    }));
    const { raw, txId, ef } = signTransaction(spent, outputs);
    return {
      txId,
      rawHex: raw.toString('hex'),
      efHex: ef.toString('hex'),
      outputs: Array.from({ length: count }, (_, vout) => ({ txId, vout, satoshis: satoshisEach })),
      change: withChange ? { txId, vout: count, satoshis: changeValue } : null,
      fee: actualFee,
    };
  }
}
