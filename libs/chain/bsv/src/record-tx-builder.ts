import { randomBytes } from 'node:crypto';
import { Transaction } from '@bsv/sdk';
import type { TransactionInput, TransactionOutput } from '@bsv/sdk';
import { sha256d, toDisplayHex } from '@proofline/chain-domain';
import type { BuiltTransaction, Outpoint, RecordTxRequest, TransactionBuilder } from '@proofline/chain-domain';
import { deriveChainKeys } from './keys';
import type { ChainKeys } from './keys';
import { FAUCET_VOUT, FUNDING_NONCE_BYTES, LAYOUT_VERSION, LINK_VOUT, faucetTxId, headerScriptBytes } from './record-layout';
import { dataScriptBytes, lockingScriptOf, p2pkhScriptBytes } from './scripts';
import { signP2pkhInputs } from './sign';
import type { SpentOutput } from './sign';

export interface BsvTransactionBuilderOptions {
  /** Key seed (default {@link DEV_CHAIN_SEED}); every process of a deployment MUST use the same one. */
  readonly seed?: string;
  /** Pre-derived keys (tests, benchmarks); wins over `seed`. */
  readonly keys?: ChainKeys;
  /** Fee rate, satoshis per 1000 bytes (the sdk's SatoshisPerKilobyte formula). Default 100. */
  readonly satoshisPerKilobyte?: number;
  /** Value of a "fund for next" output. Default 1 satoshi. */
  readonly linkSatoshis?: number;
  /** Source of funding nonces (tests inject a deterministic one). */
  readonly randomBytes?: (n: number) => Buffer;
}

/** A built transaction plus what a verifier needs to check its signatures. */
export interface BuiltRecordTransaction extends BuiltTransaction {
  /** The faucet outpoint spent as the last input, with the P2PKH script it is locked by. */
  readonly funding: Outpoint & { readonly lockingScriptHex: string };
  readonly fundingNonce: string;
  readonly fee: number;
}

const VERSION = 1;
const LOCK_TIME = 0;
/** Upper bound of a P2PKH unlocking script: push(72-byte low-S DER sig + sighash) + push(33-byte key). */
const P2PKH_UNLOCK_MAX = 107;

const varIntSize = (n: number): number => (n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9);

/**
 * Builds and signs Proofline record transactions synchronously with @bsv/sdk (layout in
 * `record-layout.ts`). Funding comes from the devnet faucet: each transaction spends one fresh
 * synthetic faucet outpoint whose value is exactly the fee plus the link output (no change).
 * @throws Error on a request that breaks the layout's rules (a programming error, not user input).
 */
export class BsvTransactionBuilder implements TransactionBuilder {
  private readonly keys: ChainKeys;
  private readonly rate: number;
  private readonly linkSatoshis: number;
  private readonly random: (n: number) => Buffer;
  private readonly linkScript: Buffer;
  private readonly fundingScript: Buffer;

  constructor(options: BsvTransactionBuilderOptions = {}) {
    this.keys = options.keys ?? deriveChainKeys(options.seed);
    this.rate = options.satoshisPerKilobyte ?? 100;
    this.linkSatoshis = options.linkSatoshis ?? 1;
    this.random = options.randomBytes ?? randomBytes;
    if (!(this.rate >= 0) || !Number.isSafeInteger(this.linkSatoshis) || this.linkSatoshis < 1) throw new Error('bad fee rate or link value');
    this.linkScript = p2pkhScriptBytes(this.keys.link.pubKeyHash);
    this.fundingScript = p2pkhScriptBytes(this.keys.funding.pubKeyHash);
  }

  build(request: RecordTxRequest): BuiltTransaction {
    const { txId, rawHex, linkOutput } = this.buildDetailed(request);
    return { txId, rawHex, linkOutput };
  }

  buildDetailed(request: RecordTxRequest): BuiltRecordTransaction {
    const { kind } = request;
    const linked = kind === 'create' || kind === 'update';
    if (kind === 'delete' ? request.data !== undefined : request.data === undefined) {
      throw new Error(kind === 'delete' ? 'a delete carries no data' : `a ${kind} needs data`);
    }
    const spends = kind === 'update' || kind === 'delete';
    if (spends !== (request.spends !== undefined)) throw new Error(`a ${kind} ${spends ? 'must' : 'must not'} spend a link output`);

    const fundingNonce = this.random(FUNDING_NONCE_BYTES).toString('hex');
    const scripts: { bytes: Buffer; satoshis: number }[] = [
      { bytes: headerScriptBytes({ kind, version: LAYOUT_VERSION, contentType: request.contentType ?? '', fundingNonce }), satoshis: 0 },
    ];
    if (request.data !== undefined) scripts.push({ bytes: dataScriptBytes([request.data]), satoshis: 0 });
    if (linked) scripts.push({ bytes: this.linkScript, satoshis: this.linkSatoshis });

    const inputCount = spends ? 2 : 1;
    const size =
      4 +
      varIntSize(inputCount) +
      inputCount * (40 + varIntSize(P2PKH_UNLOCK_MAX) + P2PKH_UNLOCK_MAX) +
      varIntSize(scripts.length) +
      scripts.reduce((n, s) => n + 8 + varIntSize(s.bytes.length) + s.bytes.length, 0) +
      4;
    const fee = Math.ceil((size / 1000) * this.rate);
    const spentLink = request.spends?.satoshis ?? 0;
    const fundingSatoshis = Math.max(1, fee + (linked ? this.linkSatoshis : 0) - spentLink);

    const spent: SpentOutput[] = [];
    if (request.spends) {
      spent.push({ txId: request.spends.txId, vout: request.spends.vout, satoshis: request.spends.satoshis, lockingScript: lockingScriptOf(this.linkScript), key: this.keys.link });
    }
    const funding = { txId: faucetTxId(fundingNonce), vout: FAUCET_VOUT, satoshis: fundingSatoshis };
    spent.push({ ...funding, lockingScript: lockingScriptOf(this.fundingScript), key: this.keys.funding });

    const outputs: TransactionOutput[] = scripts.map((s) => ({ satoshis: s.satoshis, lockingScript: lockingScriptOf(s.bytes) }));
    const unlocks = signP2pkhInputs(spent, outputs, VERSION, LOCK_TIME);
    const inputs: TransactionInput[] = spent.map((s, i) => ({ sourceTXID: s.txId, sourceOutputIndex: s.vout, sequence: 0xffffffff, unlockingScript: unlocks[i] }));
    const raw = Buffer.from(new Transaction(VERSION, inputs, outputs, LOCK_TIME).toUint8Array());
    const txId = toDisplayHex(sha256d(raw));
    return {
      txId,
      rawHex: raw.toString('hex'),
      linkOutput: linked ? { txId, vout: LINK_VOUT, satoshis: this.linkSatoshis } : null,
      funding: { ...funding, lockingScriptHex: this.fundingScript.toString('hex') },
      fundingNonce,
      fee: fundingSatoshis + spentLink - (linked ? this.linkSatoshis : 0),
    };
  }

  /** The P2PKH script every link output is locked with (hex). */
  linkLockingScriptHex(): string {
    return this.linkScript.toString('hex');
  }
}
