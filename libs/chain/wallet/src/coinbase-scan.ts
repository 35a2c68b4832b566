import { Transaction } from '@bsv/sdk';
import type { FundingPool } from './funding-pool';
import type { CoinbaseSource, CoinbaseTx, FundingUtxo } from './ports';

export interface CoinbaseScanOptions {
  readonly pool: FundingPool;
  readonly source: CoinbaseSource;
  /** The funding P2PKH locking script (hex); only outputs locked by it are imported. */
  readonly fundingScriptHex: string;
  /**
   * Confirmations a coinbase needs before it is imported: the coinbase of block h is imported
   * once the tip is at least h + maturity - 1 (Bitcoin's rule is 100; the devnet's is its own).
   */
  readonly maturity: number;
}

export interface ScanReport {
  /** Highest height scanned so far (the cursor), -1 before the first block. */
  readonly scannedTo: number;
  readonly imported: FundingUtxo[];
}

const ZERO_TXID = '0'.repeat(64);

/**
 * Imports matured coinbase outputs paying the funding key into the pool (the devnet's
 * regtest-style funding). Walks heights from the stored cursor up to the last matured block,
 * at most `maxBlocks` per run. Idempotent and safe from several workers: `add` skips known
 * outpoints, and the cursor only moves forward.
 */
export class CoinbaseScanner {
  constructor(private readonly options: CoinbaseScanOptions) {}

  async scan(maxBlocks = 500): Promise<ScanReport> {
    const { pool, source, maturity } = this.options;
    const cursor = await pool.scanHeight();
    const matured = (await source.tipHeight()) - Math.max(1, maturity) + 1;
    const imported: FundingUtxo[] = [];
    let height = cursor;
    while (height < matured && height - cursor < maxBlocks) {
      const coinbase = await source.coinbaseAt(height + 1);
      if (!coinbase) break;
      const utxos = fundingOutputsOf(coinbase, this.options.fundingScriptHex);
      if ((await pool.add(utxos)) > 0) imported.push(...utxos);
      height += 1;
      await pool.advanceScanHeight(height);
    }
    return { scannedTo: height, imported };
  }
}

/**
 * The outputs of a coinbase transaction locked by `fundingScriptHex`.
 * @throws Error when `hex` is not a coinbase (one input spending the null outpoint).
 */
export function fundingOutputsOf(coinbase: CoinbaseTx, fundingScriptHex: string): FundingUtxo[] {
  const tx = Transaction.fromHex(coinbase.hex);
  const input = tx.inputs[0];
  if (tx.inputs.length !== 1 || !input || (input.sourceTXID ?? '') !== ZERO_TXID)
    throw new Error(`block ${coinbase.height}: not a coinbase transaction`);
  const txId = tx.id('hex');
  const out: FundingUtxo[] = [];
  tx.outputs.forEach((o, vout) => {
    if ((o.satoshis ?? 0) > 0 && o.lockingScript.toHex() === fundingScriptHex)
      out.push({ txId, vout, satoshis: o.satoshis ?? 0 });
  });
  return out;
}

export interface HttpCoinbaseSourceOptions {
  /** Base URL of the devnet (the same host as its ARC API, e.g. http://127.0.0.1:9090). */
  readonly baseUrl: string;
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

/**
 * The devnet's funding endpoints over HTTP:
 * - `GET /chain/info` → `{ blocks: <tip height>, bestblockhash, ... }` (WhatsOnChain's shape);
 * - `GET /block/height/{height}/coinbase` → `{ height, blockHash, txid, hex }`, 404 beyond the tip.
 */
export function httpCoinbaseSource(options: HttpCoinbaseSourceOptions): CoinbaseSource {
  const base = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const get = async (path: string): Promise<unknown | null> => {
    const res = await doFetch(`${base}${path}`, {
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      headers: { accept: 'application/json' },
    });
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
    return res.json();
  };
  return {
    async tipHeight() {
      const info = (await get('/chain/info')) as { blocks?: unknown; height?: unknown } | null;
      const h = Number(info?.blocks ?? info?.height);
      if (!Number.isSafeInteger(h) || h < 0) throw new Error('GET /chain/info: no tip height (blocks)');
      return h;
    },
    async coinbaseAt(height) {
      const body = (await get(`/block/height/${height}/coinbase`)) as {
        height?: unknown;
        blockHash?: unknown;
        hex?: unknown;
      } | null;
      if (body === null) return null;
      if (typeof body.hex !== 'string' || typeof body.blockHash !== 'string')
        throw new Error(`GET /block/height/${height}/coinbase: malformed answer`);
      return { height, blockHash: body.blockHash, hex: body.hex };
    },
  };
}
