import { randomBytes } from 'node:crypto';
import {
  REGTEST_BITS,
  ZERO_HASH,
  buildBranchProofs,
  merkleRoot,
  mineHeader,
  sha256d,
  toDisplayHex,
} from '@proofline/chain-domain';
import type {
  BuiltTransaction,
  ChainPublisher,
  ChainReader,
  Outpoint,
  RecordTxRequest,
  BroadcastVerdict,
  TransactionBuilder,
  TxInclusion,
} from '@proofline/chain-domain';

interface FakeTx {
  kind: string;
  spends: Outpoint | null;
}

/**
 * A test double of the chain ports, in process memory: builds fake (but hash-consistent)
 * transactions, a mempool that rejects double spends and missing inputs, and blocks with real
 * 80-byte headers and TSC branch proofs (so status tests see real confirmations). Counts how
 * often each txId entered the mempool. Test-only (lib type:testing): unit specs use it to hang,
 * count or script the chain; apps and integration specs use the real BSV builder and devnet.
 */
export class InMemoryChain implements TransactionBuilder, ChainPublisher, ChainReader {
  readonly accepted = new Map<string, number>();
  private readonly mempool: string[] = [];
  private readonly spentBy = new Map<string, string>();
  private readonly included = new Map<string, TxInclusion>();
  private readonly blocks: string[] = [];
  /** Set to make submit() wait (to simulate a slow or hung node). */
  gate: Promise<void> | null = null;
  submitCalls = 0;

  build(request: RecordTxRequest): BuiltTransaction {
    const payload = Buffer.from(
      JSON.stringify({
        kind: request.kind,
        contentType: request.contentType ?? null,
        data: request.data ? Buffer.from(request.data).toString('hex') : null,
        spends: request.spends ?? null,
        funding: request.funding,
        nonce: randomBytes(8).toString('hex'),
      }),
    );
    const txId = toDisplayHex(sha256d(payload));
    const linked = request.kind === 'create' || request.kind === 'update';
    const funded = request.funding.reduce((n, u) => n + u.satoshis, 0);
    // A fake fee of 1 satoshi and the link output; the rest is change (at output 3).
    const changeSats = funded - 1 - (linked ? 1 : 0) + (request.spends?.satoshis ?? 0);
    return {
      txId,
      rawTx: payload,
      linkOutput: linked ? { txId, vout: 2, satoshis: 1 } : null,
      fundingSpent: request.funding,
      change: changeSats > 0 ? { txId, vout: 3, satoshis: changeSats } : null,
      fee: 1,
    };
  }

  /** The fake transactions cost 1 satoshi plus the link output. */
  fundingNeeded(request: Omit<RecordTxRequest, 'funding'>): number {
    return request.kind === 'create' || request.kind === 'update' ? 2 : 1;
  }

  /**
   * ARC's verdicts, as ARC gives them: a known or newly accepted tx is SEEN_ON_NETWORK; a spend of
   * an unknown output waits as an orphan; a second spend of an outpoint is refused (466).
   */
  async submit(tx: { readonly txId: string; readonly rawTx: Uint8Array }): Promise<BroadcastVerdict> {
    this.submitCalls++;
    if (this.gate) await this.gate;
    const seen: BroadcastVerdict = { kind: 'accepted', txId: tx.txId, status: 'SEEN_ON_NETWORK', mined: null };
    if (this.accepted.has(tx.txId)) return seen;
    const parsed = JSON.parse(Buffer.from(tx.rawTx).toString('utf8')) as FakeTx;
    if (parsed.spends) {
      const outpoint = `${parsed.spends.txId}:${parsed.spends.vout}`;
      if (!this.accepted.has(parsed.spends.txId))
        return { kind: 'pending', txId: tx.txId, status: 'SEEN_IN_ORPHAN_MEMPOOL', detail: outpoint };
      const by = this.spentBy.get(outpoint);
      if (by && by !== tx.txId)
        return { kind: 'refused', txId: tx.txId, code: 466, reason: outpoint, final: true, competingTxs: [by] };
      this.spentBy.set(outpoint, tx.txId);
    }
    this.accepted.set(tx.txId, 1);
    this.mempool.push(tx.txId);
    return seen;
  }

  /** Mines the mempool into a block (with a fake coinbase id first) and proves every tx. */
  mine(time = new Date()): { hash: string; height: number; header: string; txIds: string[] } {
    const coinbase = toDisplayHex(sha256d(randomBytes(32)));
    const txIds = [coinbase, ...this.mempool.splice(0)];
    const prevHash = this.blocks[this.blocks.length - 1] ?? ZERO_HASH;
    const mined = mineHeader({
      version: 1,
      prevHash,
      merkleRoot: merkleRoot(txIds),
      time: Math.floor(time.getTime() / 1000),
      bits: REGTEST_BITS,
      nonce: 0,
    });
    const proofs = buildBranchProofs(txIds, mined.hex);
    const height = this.blocks.length;
    this.blocks.push(mined.hash);
    txIds.forEach((txId, index) => {
      this.included.set(txId, {
        blockHash: mined.hash,
        blockHeight: height,
        blockTime: new Date(mined.header.time * 1000),
        index,
        proof: proofs[index] ?? null,
      });
    });
    return { hash: mined.hash, height, header: mined.hex, txIds };
  }

  async tipHeight(): Promise<number> {
    return this.blocks.length - 1;
  }

  async inclusions(txIds: readonly string[]): Promise<(TxInclusion | null)[]> {
    return txIds.map((id) => this.included.get(id) ?? null);
  }
}
