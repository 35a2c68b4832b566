import { randomBytes } from 'node:crypto';
import type { TransactionOutput } from '@bsv/sdk';
import { InsufficientFundingError } from '@proofline/chain-domain';
import type { BuiltTransaction, Outpoint, RecordTxRequest, TransactionBuilder } from '@proofline/chain-domain';
import { deriveChainKeys } from './keys';
import type { ChainKeys } from './keys';
import {
  FUNDING_NONCE_BYTES,
  LAYOUT_VERSION,
  LINK_VOUT,
  dataScriptBytes,
  headerScriptBytes,
  lockingScriptOf,
  p2pkhScriptBytes,
  signTransaction,
} from './scripts';
import type { SpentOutput } from './scripts';

export interface BsvTransactionBuilderOptions {
  /** Key seed (default {@link DEV_CHAIN_SEED}); every process of a deployment MUST use the same one. */
  readonly seed?: string;
  /** Pre-derived keys (tests, benchmarks); wins over `seed`. */
  readonly keys?: ChainKeys;
  /** Default fee rate, satoshis per 1000 bytes (the sdk's SatoshisPerKilobyte formula); a request may give its own. Default 100. */
  readonly satoshisPerKilobyte?: number;
  /** Value of a "fund for next" output. Default 1 satoshi. */
  readonly linkSatoshis?: number;
  /**
   * Smallest change output worth creating (default 1 satoshi: BSV nodes relay any output of at
   * least 1 satoshi since the dust limit was removed). Less than this goes to the fee.
   */
  readonly dustLimit?: number;
  /** Source of funding nonces (tests inject a deterministic one). */
  readonly randomBytes?: (n: number) => Buffer;
}

/** A built transaction plus what a verifier needs to check its signatures. */
export interface BuiltRecordTransaction extends BuiltTransaction {
  readonly ef: Uint8Array;
  /** The last funding input's outpoint with the P2PKH script it is locked by (every funding input has that script). */
  readonly funding: Outpoint & { readonly lockingScriptHex: string };
  readonly fundingNonce: string;
}

/** Upper bound of a P2PKH unlocking script: push(72-byte low-S DER sig + sighash) + push(33-byte key). */
const P2PKH_UNLOCK_MAX = 107;
/** A P2PKH input at its largest: outpoint 36 + script length 1 + script + sequence 4. */
const P2PKH_INPUT_MAX = 40 + 1 + P2PKH_UNLOCK_MAX;
/** A P2PKH output: satoshis 8 + script length 1 + 25-byte script. */
const P2PKH_OUTPUT = 8 + 1 + 25;

const varIntSize = (n: number): number => (n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9);

interface Layout {
  readonly linked: boolean;
  readonly spends: boolean;
  readonly fundingNonce: string;
  readonly scripts: readonly { readonly bytes: Buffer; readonly satoshis: number }[];
  readonly rate: number;
}

/**
 * `crypto.randomBytes` drawn from a 4 KiB pool refilled from it: one OpenSSL call per 256 funding
 * nonces instead of one per transaction (~28 µs each under the write benchmark, 3 % of an API
 * process). The bytes are the same CSPRNG's; each is handed out once.
 */
export function pooledRandomBytes(poolSize = 4096): (n: number) => Buffer {
  let pool = Buffer.alloc(0);
  let offset = 0;
  return (n) => {
    if (n > poolSize) return randomBytes(n);
    if (offset + n > pool.length) {
      pool = randomBytes(poolSize);
      offset = 0;
    }
    const out = Buffer.from(pool.subarray(offset, offset + n));
    offset += n;
    return out;
  };
}

/**
 * Builds and signs Proofline record transactions synchronously with @bsv/sdk (layout in
 * `scripts.ts`). Funding: the pool UTXOs the request names (P2PKH to the funding key),
 * spent after the link input, with change back to the funding script (the last output) when it
 * is at least the dust limit. The fee is computed on an upper bound of the signed size, so the
 * paid rate is never below the requested one.
 * @throws Error on a request that breaks the layout's rules (a programming error, not user
 * input); `InsufficientFundingError` when the funding cannot pay the outputs and the fee.
 */
export class BsvTransactionBuilder implements TransactionBuilder {
  private readonly keys: ChainKeys;
  private readonly rate: number;
  private readonly linkSatoshis: number;
  private readonly dustLimit: number;
  private readonly random: (n: number) => Buffer;
  private readonly linkScript: Buffer;
  private readonly fundingScript: Buffer;

  constructor(options: BsvTransactionBuilderOptions = {}) {
    this.keys = options.keys ?? deriveChainKeys(options.seed);
    this.rate = options.satoshisPerKilobyte ?? 100;
    this.linkSatoshis = options.linkSatoshis ?? 1;
    this.dustLimit = options.dustLimit ?? 1;
    this.random = options.randomBytes ?? pooledRandomBytes();
    if (!(this.rate >= 0) || !Number.isSafeInteger(this.linkSatoshis) || this.linkSatoshis < 1)
      throw new Error('bad fee rate or link value');
    if (!Number.isSafeInteger(this.dustLimit) || this.dustLimit < 1) throw new Error('bad dust limit');
    this.linkScript = p2pkhScriptBytes(this.keys.link.pubKeyHash);
    this.fundingScript = p2pkhScriptBytes(this.keys.funding.pubKeyHash);
  }

  build(request: RecordTxRequest): BuiltTransaction {
    const { txId, rawTx, ef, linkOutput, fundingSpent, change, fee } = this.buildDetailed(request);
    return { txId, rawTx, ef, linkOutput, fundingSpent, change, fee };
  }

  fundingNeeded(request: Omit<RecordTxRequest, 'funding'>): number {
    const layout = this.layout(request, '00'.repeat(FUNDING_NONCE_BYTES));
    const fee = this.feeOf(layout, 1, false);
    return Math.max(1, fee + (layout.linked ? this.linkSatoshis : 0) - (request.spends?.satoshis ?? 0));
  }

  buildDetailed(request: RecordTxRequest): BuiltRecordTransaction {
    const layout = this.layout(request, this.random(FUNDING_NONCE_BYTES).toString('hex'));
    const spentLink = request.spends?.satoshis ?? 0;
    const linkOut = layout.linked ? this.linkSatoshis : 0;

    const funding = request.funding;
    if (funding.length === 0) throw new Error('funding must name at least one UTXO');
    for (const u of funding) {
      if (!Number.isSafeInteger(u.satoshis) || u.satoshis < 1) throw new Error(`bad funding UTXO ${u.txId}:${u.vout}`);
    }
    let change = 0;
    let fee: number;
    const available = funding.reduce((n, u) => n + u.satoshis, 0) + spentLink;
    const feeWith = this.feeOf(layout, funding.length, true);
    const feeWithout = this.feeOf(layout, funding.length, false);
    const withChange = available - linkOut - feeWith;
    if (withChange >= this.dustLimit) {
      change = withChange;
      fee = feeWith;
    } else {
      fee = available - linkOut;
      if (fee < feeWithout) throw new InsufficientFundingError(feeWithout + linkOut, available);
    }

    const spent: SpentOutput[] = [];
    if (request.spends) {
      spent.push({
        txId: request.spends.txId,
        vout: request.spends.vout,
        satoshis: spentLink,
        lockingScript: lockingScriptOf(this.linkScript),
        key: this.keys.link,
      });
    }
    const fundingLock = lockingScriptOf(this.fundingScript);
    for (const u of funding)
      spent.push({
        txId: u.txId,
        vout: u.vout,
        satoshis: u.satoshis,
        lockingScript: fundingLock,
        key: this.keys.funding,
      });

    const outputs: TransactionOutput[] = layout.scripts.map((s) => ({
      satoshis: s.satoshis,
      lockingScript: lockingScriptOf(s.bytes),
    }));
    if (change > 0) outputs.push({ satoshis: change, lockingScript: fundingLock });
    const { raw, txId, ef } = signTransaction(spent, outputs);
    const last = funding[funding.length - 1] as Outpoint;
    return {
      txId,
      rawTx: raw,
      ef,
      linkOutput: layout.linked ? { txId, vout: LINK_VOUT, satoshis: this.linkSatoshis } : null,
      fundingSpent: funding,
      change: change > 0 ? { txId, vout: outputs.length - 1, satoshis: change } : null,
      fee,
      funding: { ...last, lockingScriptHex: this.fundingScript.toString('hex') },
      fundingNonce: layout.fundingNonce,
    };
  }

  /** The P2PKH script every link output is locked with (hex). */
  linkLockingScriptHex(): string {
    return this.linkScript.toString('hex');
  }

  /** The P2PKH script every funding (pool) UTXO and change output is locked with (hex). */
  fundingLockingScriptHex(): string {
    return this.fundingScript.toString('hex');
  }

  private layout(request: Omit<RecordTxRequest, 'funding'>, fundingNonce: string): Layout {
    const { kind } = request;
    const linked = kind === 'create' || kind === 'update';
    if (kind === 'delete' ? request.data !== undefined : request.data === undefined) {
      throw new Error(kind === 'delete' ? 'a delete carries no data' : `a ${kind} needs data`);
    }
    const spends = kind === 'update' || kind === 'delete';
    if (spends !== (request.spends !== undefined))
      throw new Error(`a ${kind} ${spends ? 'must' : 'must not'} spend a link output`);
    const rate = request.satoshisPerKilobyte ?? this.rate;
    if (!(rate >= 0 && Number.isFinite(rate))) throw new Error(`bad fee rate ${rate}`);
    const scripts: { bytes: Buffer; satoshis: number }[] = [
      {
        bytes: headerScriptBytes({
          kind,
          version: LAYOUT_VERSION,
          contentType: request.contentType ?? '',
          fundingNonce,
        }),
        satoshis: 0,
      },
    ];
    if (request.data !== undefined) scripts.push({ bytes: dataScriptBytes([request.data]), satoshis: 0 });
    if (linked) scripts.push({ bytes: this.linkScript, satoshis: this.linkSatoshis });
    return { linked, spends, fundingNonce, scripts, rate };
  }

  /** Fee for the layout with `fundingInputs` funding inputs (and a change output), on an upper bound of the signed size. */
  private feeOf(layout: Layout, fundingInputs: number, withChange: boolean): number {
    const inputCount = fundingInputs + (layout.spends ? 1 : 0);
    const outputCount = layout.scripts.length + (withChange ? 1 : 0);
    const size =
      4 +
      varIntSize(inputCount) +
      inputCount * P2PKH_INPUT_MAX +
      varIntSize(outputCount) +
      layout.scripts.reduce((n, s) => n + 8 + varIntSize(s.bytes.length) + s.bytes.length, 0) +
      (withChange ? P2PKH_OUTPUT : 0) +
      4;
    return Math.ceil((size / 1000) * layout.rate);
  }
}
