import { reachedNetwork, refusalCode } from '@proofline/chain-domain';
import type { BroadcastVerdict } from '@proofline/chain-domain';
import { Transaction } from '@bsv/sdk';
import type { FundingPool } from './funding-pool';
import { inputsReleasable } from './release-rules';
import type { BuiltSplit, FundingUtxo, SplitBuilder, StatusPort, SubmitPort } from './ports';

export interface SplitterOptions {
  readonly pool: FundingPool;
  readonly builder: SplitBuilder;
  readonly submit: SubmitPort;
  /**
   * ARC's status of a committed split: with it, every run first asks ARC about the splits still
   * unsettled (a split answered below SEEN_ON_NETWORK is settled at the next run, a split ARC does
   * not know is sent again) instead of re-sending them after `resubmitAfterMs`.
   */
  readonly status?: StatusPort;
  /** Fee rate used to estimate how much to reserve (the builder computes the real fee). */
  readonly satoshisPerKilobyte: number;
  /** Lock lifetime: longer than one build + submit (default 120 s). */
  readonly lockMs?: number;
  /** Most inputs one split spends (default 20). */
  readonly maxInputs?: number;
  /** Most outputs one split creates (default 1000, about 34 kB). */
  readonly maxOutputs?: number;
  /** Without `status`: an unsettled split older than this is submitted again, same bytes (default 60 s). */
  readonly resubmitAfterMs?: number;
  readonly now?: () => number;
}

export interface LowWaterRequest {
  /**
   * Split when fewer denomination UTXOs (worth [satoshisEach, 2 × satoshisEach)) than this are
   * free or on their way in an unsettled split (`POOL_LOW_WATER`).
   */
  readonly lowWater: number;
  /** Split up to this many denomination UTXOs (`POOL_TARGET`). */
  readonly target: number;
  /** Denomination of a pool UTXO (`POOL_UTXO_SATS`). */
  readonly satoshisEach: number;
  /** Split even above the low-water mark, up to `target` (the CLI's `wallet split`). */
  readonly force?: boolean;
  /**
   * The pool shard (records partition unit) to keep above the mark: its inputs, outputs, lock and
   * counts are that shard's. Default the pool's first shard (the only one with one partition).
   */
  readonly partition?: string;
  /**
   * Count the denomination over every shard, not only `partition`'s (the marks are then the
   * deployment's): a split in the shard that holds the reservoir, for the whole pool, whose
   * outputs go, when ARC accepts it, each to the shard with the fewest (the split's commit names
   * them; the confirm adds them there).
   */
  readonly wholePool?: boolean;
}

/** What one `ensureLowWater` run did. Only `error` means "look at this"; the rest are data. */
export type SplitReport =
  /** Another worker holds the split lock right now. */
  | { readonly status: 'busy' }
  /** Enough usable UTXOs are free or pending (`usable` counts both). */
  | { readonly status: 'sufficient'; readonly usable: number }
  /** Nothing large enough to split (fund the wallet). */
  | { readonly status: 'exhausted'; readonly usable: number; readonly availableSatoshis: number }
  /** A split was built, committed and submitted; `outcome` is ARC's answer. */
  | {
      readonly status: 'split';
      readonly txId: string;
      readonly outputs: number;
      readonly fee: number;
      readonly outcome: 'accepted' | 'pending';
    }
  /** ARC definitively rejected the split; inputs were released or dropped by the release rules. */
  | {
      readonly status: 'rejected';
      readonly txId: string;
      readonly code: string;
      readonly reason: string;
      readonly inputsReleased: boolean;
    }
  /**
   * ARC could not be reached or answered ambiguously. The split stays committed (inputs spent,
   * outputs pending) and its same bytes are submitted again by a later run.
   */
  | { readonly status: 'unreachable'; readonly txId: string; readonly error: string };

/** Bytes of a P2PKH input and output, and a transaction's fixed part (for the reservation estimate). */
const P2PKH_INPUT_BYTES = 148;
const P2PKH_OUTPUT_BYTES = 34;
const TX_OVERHEAD_BYTES = 10 + 2 * 9;
/** Unsettled splits one run asks ARC about. */
const FOLLOW_UP_MAX = 10;

/**
 * Keeps one shard of the pool above its low-water mark by splitting its large UTXOs into many
 * `satoshisEach` ones (a split's inputs and outputs are in one shard: it is committed and
 * settled there). Safe to run from several workers at once: one run at a time holds a Redis lock (SET NX
 * PX with a token), and every pool change is itself atomic, so a run that loses its lock mid-way
 * still cannot double-spend (its inputs are leased to it alone).
 *
 * Order per split: reserve inputs → build → commit (inputs spent, outputs pending) → submit →
 * confirm (outputs free) or fail. The commit MUST precede the submit: a crash after the submit
 * then leaves a committed split that a later run re-submits, never a lost one.
 */
export class Splitter {
  private readonly lockMs: number;
  private readonly maxInputs: number;
  private readonly maxOutputs: number;
  private readonly resubmitAfterMs: number;
  private readonly now: () => number;

  constructor(private readonly options: SplitterOptions) {
    this.lockMs = options.lockMs ?? 120_000;
    this.maxInputs = options.maxInputs ?? 20;
    this.maxOutputs = options.maxOutputs ?? 1000;
    this.resubmitAfterMs = options.resubmitAfterMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  async ensureLowWater(request: LowWaterRequest): Promise<SplitReport> {
    const { lowWater, target, satoshisEach } = request;
    if (!(Number.isSafeInteger(satoshisEach) && satoshisEach >= 1 && lowWater >= 0 && target >= lowWater)) {
      throw new RangeError('need satoshisEach >= 1 and 0 <= lowWater <= target');
    }
    const { pool } = this.options;
    const shard = { partition: request.partition ?? pool.partitions.unit(0) };
    const token = await pool.acquireSplitLock(this.lockMs, shard);
    if (token === null) return { status: 'busy' };
    try {
      const followed = this.options.status
        ? await this.followUp(this.options.status, shard)
        : await this.resubmitStale(shard);
      if (followed) return followed;
      const counted = request.wholePool ? {} : shard;
      const usable =
        (await pool.denominatedCount(satoshisEach, counted)) + (await this.pendingSplitOutputs(satoshisEach, counted));
      if (usable >= (request.force ? target : lowWater)) return { status: 'sufficient', usable };
      return await this.split(
        Math.min(target - usable, this.maxOutputs),
        satoshisEach,
        usable,
        shard,
        request.wholePool === true && !pool.partitions.single,
      );
    } finally {
      await pool.releaseSplitLock(token, shard);
    }
  }

  private async split(
    wantedCount: number,
    satoshisEach: number,
    usable: number,
    shard: { readonly partition: string },
    spread: boolean,
  ): Promise<SplitReport> {
    const { pool } = this.options;
    const fee = (inputs: number, outputs: number) =>
      Math.ceil(
        ((TX_OVERHEAD_BYTES + inputs * P2PKH_INPUT_BYTES + (outputs + 1) * P2PKH_OUTPUT_BYTES) *
          this.options.satoshisPerKilobyte) /
          1000,
      );
    const reserved = await pool.reserveLargest({
      wanted: wantedCount * satoshisEach + fee(this.maxInputs, wantedCount),
      least: 2 * satoshisEach + fee(1, 2),
      maxInputs: this.maxInputs,
      above: satoshisEach,
      leaseMs: this.lockMs,
      ...shard,
    });
    if (reserved.status === 'exhausted')
      return { status: 'exhausted', usable, availableSatoshis: reserved.availableSatoshis };
    const inputs = reserved.utxos;
    const total = inputs.reduce((s, u) => s + u.satoshis, 0);
    let count = Math.min(wantedCount, Math.floor((total - fee(inputs.length, wantedCount)) / satoshisEach));
    let built: BuiltSplit | null = null;
    try {
      // The estimate can undershoot the builder's real fee by a little: shrink and try again.
      for (let attempt = 0; attempt < 4 && count >= 1 && !built; attempt++) {
        try {
          built = this.options.builder.buildSplitTransaction({ inputs, count, satoshisEach });
        } catch (e) {
          if (!(e instanceof Error && e.name === 'InsufficientFundingError')) throw e;
          count = Math.floor(count * 0.9) - 1;
        }
      }
    } catch (e) {
      await pool.release(reserved.owner, inputs, shard);
      throw e;
    }
    if (!built) {
      await pool.release(reserved.owner, inputs, shard);
      return { status: 'exhausted', usable, availableSatoshis: total };
    }
    const outputs: FundingUtxo[] = [...built.outputs, ...(built.change ? [built.change] : [])];
    let destinations: string[] | undefined;
    try {
      destinations = spread ? await this.destinations(built.outputs.length, satoshisEach) : undefined;
    } catch (e) {
      await pool.release(reserved.owner, inputs, shard);
      throw e;
    }
    const committed = await pool.commit({
      txId: built.txId,
      owner: reserved.owner,
      inputs,
      outputs,
      kind: 'split',
      rawHex: built.efHex,
      ...(destinations ? { destinations } : {}),
      ...shard,
    });
    if (committed !== 'OK')
      throw new Error(`split ${built.txId} could not be committed (${committed}); nothing was broadcast`);
    return this.submitCommitted(built.txId, built.rawHex, built.efHex, built.outputs.length, built.fee);
  }

  /** Submits a committed split and settles the pool by ARC's answer. */
  private async submitCommitted(
    txId: string,
    rawHex: string,
    efHex: string,
    outputs: number,
    fee: number,
  ): Promise<SplitReport> {
    let verdict: BroadcastVerdict;
    try {
      verdict = await this.options.submit({ txId, rawHex, efHex });
    } catch (e) {
      return { status: 'unreachable', txId, error: e instanceof Error ? e.message : String(e) };
    }
    return this.settleSplit(txId, verdict, outputs, fee);
  }

  /**
   * Settles a committed split by ARC's verdict: outputs spendable at SEEN_ON_NETWORK or MINED;
   * below it, a DOUBLE_SPEND_ATTEMPTED (it may still be mined, until a competing transaction is)
   * or a problem with the request, the split waits; any other refusal settles it, its inputs
   * going back only by the release rules.
   */
  private async settleSplit(
    txId: string,
    verdict: BroadcastVerdict,
    outputs: number,
    fee: number,
  ): Promise<SplitReport> {
    const { pool } = this.options;
    if (verdict.kind === 'accepted') {
      await pool.confirm(txId);
      return { status: 'split', txId, outputs, fee, outcome: 'accepted' };
    }
    if (verdict.kind === 'pending' || verdict.kind === 'request-problem')
      return { status: 'split', txId, outputs, fee, outcome: 'pending' };
    if (verdict.code === 'DOUBLE_SPEND_ATTEMPTED' && !(await this.competingMined(verdict.competingTxs)))
      return { status: 'split', txId, outputs, fee, outcome: 'pending' };
    const code = refusalCode(verdict);
    const release = inputsReleasable({ code, reachedNetwork: reachedNetwork(verdict) });
    await pool.fail(txId, { releaseInputs: release });
    const reason = verdict.reason;
    return { status: 'rejected', txId, code, reason, inputsReleased: release };
  }

  /**
   * Asks ARC about the unsettled splits (oldest first, up to FOLLOW_UP_MAX): seen or mined →
   * outputs free; refused for good → settled by the release rules; unknown to ARC → the same
   * bytes again; still below SEEN (or ARC unreachable) → asked again next run. Returns a report
   * only when a re-sent split is still not accepted (no second split is built on top of it).
   */
  private async followUp(status: StatusPort, shard: { readonly partition: string }): Promise<SplitReport | null> {
    const splits = (await this.options.pool.unsettled(1000, shard)).filter((t) => t.kind === 'split' && t.rawHex);
    for (const split of splits.slice(0, FOLLOW_UP_MAX)) {
      let answer: Awaited<ReturnType<StatusPort>>;
      try {
        answer = await status(split.txId);
      } catch {
        continue;
      }
      if (answer.kind === 'not-found') {
        const efHex = split.rawHex as string;
        const report = await this.submitCommitted(split.txId, Transaction.fromHexEF(efHex).toHex(), efHex, 0, 0);
        if (!(report.status === 'split' && report.outcome === 'accepted')) return report;
        continue;
      }
      await this.settleSplit(split.txId, answer, split.outputs.length, 0);
    }
    return null;
  }

  /** True when ARC reports one of a double spend's competing transactions MINED (the split can never be). */
  private async competingMined(competingTxs: readonly string[]): Promise<boolean> {
    const status = this.options.status;
    if (!status) return false;
    for (const txId of competingTxs) {
      const answer = await status(txId).catch(() => null);
      if (answer?.kind === 'accepted' && answer.status === 'MINED') return true;
    }
    return false;
  }

  /** Submits the oldest unsettled split again (same bytes) once it is older than `resubmitAfterMs`. */
  private async resubmitStale(shard: { readonly partition: string }): Promise<SplitReport | null> {
    const cutoff = this.now() - this.resubmitAfterMs;
    const stale = (await this.options.pool.unsettled(1000, shard)).find(
      (t) => t.kind === 'split' && t.rawHex && t.committedAt.getTime() <= cutoff,
    );
    if (!stale?.rawHex) return null;
    const tx = Transaction.fromHexEF(stale.rawHex);
    const report = await this.submitCommitted(stale.txId, tx.toHex(), stale.rawHex, stale.outputs.length, 0);
    // Still not accepted: let the next run try again rather than building a second split on top.
    return report.status === 'split' && report.outcome === 'accepted' ? null : report;
  }

  /**
   * Where each of a split's `count` denomination outputs goes when it is confirmed (for the whole
   * pool): one at a time to the shard holding the fewest free denomination UTXOs, so that the
   * shards end level and no output has to move again (one ZCOUNT per shard).
   */
  private async destinations(count: number, satoshisEach: number): Promise<string[]> {
    const { pool } = this.options;
    const units = pool.partitions.units;
    const level = await Promise.all(units.map((partition) => pool.denominatedCount(satoshisEach, { partition })));
    const out: string[] = [];
    for (let j = 0; j < count; j++) {
      let lowest = 0;
      for (let i = 1; i < level.length; i++) if ((level[i] ?? 0) < (level[lowest] ?? 0)) lowest = i;
      level[lowest] = (level[lowest] ?? 0) + 1;
      out.push(units[lowest] as string);
    }
    return out;
  }

  /** Denomination outputs of unsettled splits: free soon, so they count against the low-water mark. */
  private async pendingSplitOutputs(satoshisEach: number, shard: { readonly partition?: string }): Promise<number> {
    const txs = await this.options.pool.unsettled(1000, shard);
    return txs
      .filter((t) => t.kind === 'split')
      .reduce(
        (n, t) =>
          n +
          t.outputs
            .map((o) => Number(o.slice(o.indexOf('=') + 1)))
            .filter((v) => v >= satoshisEach && v < 2 * satoshisEach).length,
        0,
      );
  }
}
