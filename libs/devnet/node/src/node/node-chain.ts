import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@proofline/shared-redis';
import { LockingScript, Spend, UnlockingScript } from '@bsv/sdk';
import type { TransactionInput, TransactionOutput } from '@bsv/sdk';
import { merkleBranches, mineHeader, parseHeader, sha256d, toDisplayHex, tscProof } from '@proofline/chain-domain';
import { DEVNET_SUBSIDY, buildCoinbaseTo, tscToBumpHex } from '@proofline/chain-bsv';
import type { Clock } from '@proofline/shared-config';
import { fromScriptReply } from '@proofline/shared-redis';
import { DEVNET_BLOCK_VERSION, DevnetBlockProducer } from '../block-producer';
import { blockContentKeys, blockTxArgs, devnetCommands } from '../commands';
import type { DevnetCommands } from '../commands';
import { withNativeChecksig } from './native-checksig';
import { ForkIdDigests, checkStandardP2pkh } from './p2pkh-check';
import { competitorsKey, devnetKeys, orphansOfKey, outpointField } from '../keys';
import type { DevnetKeys } from '../keys';
import { NODE_ACCEPT_REPLIES, REORG_TIP_REPLIES } from '../script-replies';
import type { TxRefusal, TxStatusRecord } from './arc-protocol';
import { STATUSES_BEFORE_SEEN } from './arc-settings';
import type { ArcRealities, ArcStrictness } from './arc-settings';
import { readTransaction } from './tx-format';
import type { SubmittedTx, WireInput, WireOutput, WireTx } from './tx-format';

/**
 * Coinbase maturity of the devnet node: the coinbase of block h is spendable once the tip is at
 * least h + COINBASE_MATURITY - 1, i.e. once one more block is built on it (Bitcoin's rule is 100
 * confirmations; a devnet wants funds within one block interval, and 2 keeps the tip block's
 * coinbase unspendable, so a reorg of the last block can never orphan a spend of it).
 */
export const COINBASE_MATURITY = 2;

/** The outcome of one submission: a status (HTTP 200 in ARC) or a refusal with an ARC code. */
export type AcceptOutcome =
  | {
      readonly kind: 'status';
      readonly record: TxStatusRecord;
      readonly fresh: boolean;
      /** Other transactions' new statuses this submission caused (the first spender of a double spend, adopted orphans). */
      readonly alsoChanged?: readonly TxStatusRecord[];
      /** When the fresh transaction's status becomes SEEN_ON_NETWORK (ms epoch), if not yet. */
      readonly seenAtMs?: number;
    }
  | { readonly kind: 'refused'; readonly refusal: TxRefusal };

export interface MinedBlock {
  readonly hash: string;
  readonly height: number;
  /** Coinbase first. */
  readonly txIds: string[];
}

export interface NodeChainOptions {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly coinbaseLockingScriptHex: string;
  readonly feeSatoshisPerKb: number;
  readonly clock: Clock;
  /** Returns true when BUMPs must be corrupted (fault switch), read on every status. */
  readonly corruptBump: () => boolean;
  /** Read on every submission (a test may change them between requests). */
  readonly strictness: ArcStrictness;
  readonly realities: ArcRealities;
}

interface StoredVerdict {
  readonly txStatus: 'DOUBLE_SPEND_ATTEMPTED' | 'REJECTED';
  readonly extraInfo: string;
  readonly competingTxs: string[] | null;
}

const NULL_TXID = '0'.repeat(64);

/** An output is spendable unless it is a data output (`OP_RETURN` / `OP_FALSE OP_RETURN`). */
const isSpendableScript = (scriptHex: string): boolean => !scriptHex.startsWith('6a') && !scriptHex.startsWith('006a');
/** Parsed parent transactions kept by one node process (see `NodeChain.parsedParents`). */
const PARSED_PARENTS_MAX = 256;

/** A transaction that passed every check needing no UTXO state, ready for the accept script. */
interface Checked {
  readonly txId: string;
  readonly rawHex: string;
  readonly outpoints: readonly string[];
  readonly spendable: readonly { readonly vout: number; readonly satoshis: number }[];
  /** Unknown parents of an EF transaction validated with its EF data (an orphan until they are accepted). */
  readonly missingParents: readonly string[];
}

/** An orphan as stored: enough to validate it again once its parents are known. */
interface StoredOrphan {
  readonly rawHex: string;
  readonly efInputs: SubmittedTx['efInputs'];
}

/** Statuses of a transaction the accept script took into the mempool (its outputs spendable). */
const IN_MEMPOOL: ReadonlySet<string> = new Set(['SEEN_ON_NETWORK', ...STATUSES_BEFORE_SEEN]);
const isInMempool = (status: string): boolean => IN_MEMPOOL.has(status);

const refuse = (code: number, detail: string, txid: string | null): AcceptOutcome => ({
  kind: 'refused',
  refusal: { code, detail, txid },
});

/**
 * The devnet node's chain: validation and acceptance of submitted transactions (every input's
 * script checked: standard P2PKH directly, the rest by the sdk's interpreter, fees, outputs, then the atomic UTXO decision in
 * `node-accept-7.lua`), statuses with BUMPs, block production to the wallet's script, reorg of
 * the tip, and the header/coinbase reads. Holds no timers; `DevnetNode` drives it.
 */
export class NodeChain {
  readonly keys: DevnetKeys;
  private readonly commands: DevnetCommands;
  private readonly producer: DevnetBlockProducer;
  private readonly redis: RedisClient;

  /**
   * Parsed transactions read as parents, most recently used last (bounded). A funding split has
   * ~1,000 outputs (~34 KB) and each of them funds one record: without this, every record's
   * validation fetched and parsed the whole split again. Transactions are immutable by txId, and
   * whether an output is still there to spend is decided by node-accept-7.lua, never from here.
   */
  private readonly parsedParents = new Map<string, WireTx>();

  constructor(private readonly o: NodeChainOptions) {
    this.redis = o.redis;
    this.keys = devnetKeys(o.prefix);
    this.commands = devnetCommands(o.redis);
    this.producer = new DevnetBlockProducer(o.redis, o.prefix, {
      coinbaseLockingScriptHex: o.coinbaseLockingScriptHex,
    });
  }

  // ---------------------------------------------------------------- submissions

  /** The transactions `wire` spends from, parsed: from the cache, the rest in one HMGET. Unknown ones are absent. */
  private async parentsOf(wire: WireTx): Promise<Map<string, WireTx>> {
    const parents = new Map<string, WireTx>();
    const missing: string[] = [];
    for (const id of new Set(wire.inputs.map((i) => i.sourceTXID))) {
      const cached = this.parsedParents.get(id);
      if (cached) {
        this.parsedParents.delete(id);
        this.parsedParents.set(id, cached);
        parents.set(id, cached);
      } else missing.push(id);
    }
    if (missing.length === 0) return parents;
    const hexes = await this.redis.hmget(this.keys.raw, ...missing);
    missing.forEach((id, i) => {
      const hex = hexes[i];
      if (!hex) return;
      // Stored transactions were read by this same walker when accepted: they parse.
      const parsed = readTransaction(Buffer.from(hex, 'hex')).tx.wire;
      parents.set(id, parsed);
      this.rememberParsed(id, parsed);
    });
    return parents;
  }

  private rememberParsed(txId: string, wire: WireTx): void {
    this.parsedParents.set(txId, wire);
    if (this.parsedParents.size > PARSED_PARENTS_MAX)
      this.parsedParents.delete(this.parsedParents.keys().next().value as string);
  }

  /** Validates and accepts one submitted transaction (idempotent by txId). */
  async accept(sub: SubmittedTx): Promise<AcceptOutcome> {
    const [outcome] = await this.acceptInOrder([sub]);
    return outcome as AcceptOutcome;
  }

  /**
   * Validates and accepts submitted transactions in order, each as {@link accept} would (a later
   * one may spend an earlier one). Round trips: one status read for all; parent reads only for
   * parents neither cached nor earlier in the list; the accept scripts are sent back to back
   * without waiting for each other's replies: Redis runs them in order, so each decides on the
   * UTXO state the ones before it left (a child whose parent was refused there finds no output).
   */
  async acceptInOrder(subs: readonly SubmittedTx[]): Promise<AcceptOutcome[]> {
    const raws = subs.map((sub) => Buffer.from(sub.rawHex, 'hex'));
    const txIds = raws.map((raw) => toDisplayHex(sha256d(raw)));
    const known = await this.statusMany(txIds);
    // Not stored before this request: what ARC's parent lookup for a raw transaction cannot find
    // (it validates the whole request before submitting any of it).
    const newInRequest = new Set(txIds.filter((_, i) => !known[i]));
    const outcomes: Promise<AcceptOutcome>[] = [];
    for (const [i, sub] of subs.entries()) {
      const txId = txIds[i] as string;
      const record = known[i];
      if (record) {
        outcomes.push(Promise.resolve({ kind: 'status', record, fresh: false }));
        continue;
      }
      const notExtended = this.rawRefusal(sub, txId, newInRequest);
      if (notExtended) {
        outcomes.push(Promise.resolve(notExtended));
        continue;
      }
      const checked = await this.validate(sub, txId, raws[i] as Buffer);
      if ('kind' in checked) {
        outcomes.push(Promise.resolve(checked));
        continue;
      }
      if (checked.missingParents.length > 0) {
        outcomes.push(this.keepOrphan(checked, sub));
        continue;
      }
      // Its children later in the list validate against it before its script has run (the fields
      // read when it was submitted: the same inputs and outputs as its standard serialization's).
      this.rememberParsed(txId, sub.wire);
      outcomes.push(this.commit(checked));
    }
    const done = await Promise.all(outcomes);
    return this.o.strictness.efOrphans ? this.adoptOrphans(done) : done;
  }

  /** Holds an EF transaction whose parents are unknown as SEEN_IN_ORPHAN_MEMPOOL, filed under each parent. */
  private async keepOrphan(checked: Checked, sub: SubmittedTx): Promise<AcceptOutcome> {
    const stored: StoredOrphan = { rawHex: checked.rawHex, efInputs: sub.efInputs };
    // Filed in arrival order (the mempool's counter): the first orphan to spend an output wins it.
    const arrival = await this.redis.incr(this.keys.seq);
    const tx = this.redis.multi().hset(this.keys.orphans, checked.txId, JSON.stringify(stored));
    for (const parent of checked.missingParents) tx.zadd(orphansOfKey(this.keys, parent), arrival, checked.txId);
    await tx.exec();
    return { kind: 'status', record: this.orphan(checked.txId), fresh: true };
  }

  /**
   * Orphans waiting for a transaction just accepted are validated again, now with their parent
   * (and accepted, or refused: then REJECTED, as the network would); their new records go to the
   * parent's `alsoChanged` (for callbacks). Their own children follow in the same way.
   */
  private async adoptOrphans(outcomes: AcceptOutcome[]): Promise<AcceptOutcome[]> {
    const parents = outcomes.flatMap((o, i) =>
      o.kind === 'status' && o.fresh && isInMempool(o.record.txStatus) ? [{ i, txId: o.record.txid }] : [],
    );
    if (parents.length === 0) return outcomes;
    // No orphan held at all, the usual case: none waits for these parents (an orphan is filed in
    // the orphans hash and under each missing parent in one MULTI), so one HLEN instead of a
    // ZRANGE per parent.
    if ((await this.redis.hlen(this.keys.orphans)) === 0) return outcomes;
    const pipe = this.redis.pipeline();
    for (const { txId } of parents) pipe.zrange(orphansOfKey(this.keys, txId), 0, -1);
    const waiting = ((await pipe.exec()) ?? []).map(([err, v]) => {
      if (err) throw err;
      return v as string[];
    });
    const out = [...outcomes];
    for (const [j, { i, txId }] of parents.entries()) {
      const childIds = waiting[j] ?? [];
      if (childIds.length === 0) continue;
      const stored = await this.redis.hmget(this.keys.orphans, ...childIds);
      await this.redis
        .multi()
        .hdel(this.keys.orphans, ...childIds)
        .del(orphansOfKey(this.keys, txId))
        .exec();
      const children = childIds.flatMap((id, c) => {
        const json = stored[c];
        if (!json) return [];
        const orphan = JSON.parse(json) as StoredOrphan;
        const { wire } = readTransaction(Buffer.from(orphan.rawHex, 'hex')).tx;
        return [{ id, sub: { rawHex: orphan.rawHex, efInputs: orphan.efInputs, wire } satisfies SubmittedTx }];
      });
      // One still missing another parent is filed again under it by the same path.
      const adopted = await this.acceptInOrder(children.map((c) => c.sub));
      const changed: TxStatusRecord[] = [];
      for (const [c, outcome] of adopted.entries()) {
        if (outcome.kind === 'status') {
          changed.push(outcome.record, ...(outcome.alsoChanged ?? []));
          continue;
        }
        const verdict: StoredVerdict = {
          txStatus: 'REJECTED',
          extraInfo: `refused once its parent ${txId} arrived: ${outcome.refusal.detail}`,
          competingTxs: null,
        };
        const id = (children[c] as { id: string }).id;
        await this.redis.hset(this.keys.verdicts, id, JSON.stringify(verdict));
        changed.push(this.fromVerdict(id, verdict));
      }
      const parent = out[i] as AcceptOutcome & { kind: 'status' };
      out[i] = { ...parent, alsoChanged: [...(parent.alsoChanged ?? []), ...changed] };
    }
    return out;
  }

  /**
   * ARC's 460 for a raw (non-EF) transaction: refused outright when the node is configured
   * without `standardFormatSupported`, or when a parent is in the same request (see
   * `ArcStrictness.rawParentsMustBeStored`; a parent missing from the store is found in `validate`).
   */
  private rawRefusal(sub: SubmittedTx, txId: string, newInRequest: ReadonlySet<string>): AcceptOutcome | null {
    if (sub.efInputs !== null) return null;
    const s = this.o.strictness;
    if (!s.standardFormatSupported)
      return refuse(460, 'transaction is not in extended format (standardFormatSupported is false)', txId);
    if (!s.rawParentsMustBeStored) return null;
    const parent = sub.wire.inputs.find((i) => newInRequest.has(i.sourceTXID));
    return parent
      ? refuse(
          460,
          `parent ${parent.sourceTXID} is not stored yet (it is in the same request): a raw transaction needs its parents stored before the request, or Extended Format`,
          txId,
        )
      : null;
  }

  /** Everything about one transaction that needs no UTXO state: outputs, inputs' structure, fee, scripts. */
  private async validate(sub: SubmittedTx, txId: string, raw: Buffer): Promise<AcceptOutcome | Checked> {
    const { wire } = sub;
    // Outputs (464): data outputs carry no value, every other output at least the 1-sat dust limit.
    const outputs: { vout: number; satoshis: number; scriptHex: string }[] = [];
    for (const [vout, out] of wire.outputs.entries()) {
      const head = out.script.subarray(0, 2).toString('hex');
      const data = !isSpendableScript(head);
      if (data && out.satoshis !== 0)
        return refuse(464, `output ${vout} is an OP_RETURN output carrying ${out.satoshis} satoshis (must be 0)`, txId);
      if (!data && out.satoshis < 1) return refuse(464, `output ${vout} is below the dust limit (1 satoshi)`, txId);
      outputs.push({ vout, satoshis: out.satoshis, scriptHex: head });
    }
    // Inputs (463 for structure, 462 for what they spend).
    const outpoints = wire.inputs.map((i) => outpointField(i.sourceTXID, i.sourceOutputIndex));
    if (wire.inputs.some((i) => i.sourceTXID === NULL_TXID))
      return refuse(463, 'a coinbase transaction cannot be submitted', txId);
    if (new Set(outpoints).size !== outpoints.length)
      return refuse(463, 'the transaction spends one outpoint twice', txId);
    const parents = await this.parentsOf(wire);
    const spent: WireOutput[] = [];
    const missingParents = new Set<string>();
    for (const [i, input] of wire.inputs.entries()) {
      const out = parents.get(input.sourceTXID)?.outputs[input.sourceOutputIndex];
      const efInput = sub.efInputs?.[i];
      // An unknown parent of an EF transaction: validated with the output its EF carries (an orphan).
      if (!parents.has(input.sourceTXID) && efInput && this.o.strictness.efOrphans) {
        missingParents.add(input.sourceTXID);
        spent.push({ satoshis: efInput.satoshis, script: Buffer.from(efInput.lockingScriptHex, 'hex') });
        continue;
      }
      // ARC cannot extend a raw transaction whose parent output it cannot find (extendTx: 460).
      if (!out && sub.efInputs === null && this.o.strictness.rawParentsMustBeStored)
        return refuse(
          460,
          `input ${i} spends ${outpoints[i] ?? ''}: its parent is not stored, so the raw transaction cannot be extended`,
          txId,
        );
      if (!out) return refuse(462, `input ${i} spends ${outpoints[i] ?? ''}, which is no known output`, txId);
      const ef = sub.efInputs?.[i];
      if (ef && (ef.satoshis !== out.satoshis || ef.lockingScriptHex !== out.script.toString('hex'))) {
        return refuse(461, `input ${i}: the Extended Format data does not match the output it spends`, txId);
      }
      spent.push(out);
    }
    // Fee (465): ceil(size × rate / 1000), the sdk's SatoshisPerKilobyte rule.
    const totalIn = spent.reduce((s, o) => s + o.satoshis, 0);
    const totalOut = outputs.reduce((s, o) => s + o.satoshis, 0);
    const required = Math.ceil((raw.length * this.o.feeSatoshisPerKb) / 1000);
    if (totalIn - totalOut < required) {
      return refuse(
        465,
        `fee ${totalIn - totalOut} satoshis is below the policy's ${required} for ${raw.length} bytes (${this.o.feeSatoshisPerKb} sat/kB)`,
        txId,
      );
    }
    // Scripts (461): a standard P2PKH spend is checked directly (p2pkh-check.ts: true only when
    // the interpreter would accept it too); every other input, and any such input that does not
    // pass, through the interpreter against the output it spends, which gives the verdict.
    const digests = new ForkIdDigests(wire);
    let sdk: SdkViews | null = null;
    for (const [i, out] of spent.entries()) {
      if (checkStandardP2pkh(wire, i, out, digests)) continue;
      sdk ??= sdkViews(wire);
      const verdict = verifyInput(wire, sdk.inputs, sdk.outputs, i, out);
      if (verdict !== true) return refuse(461, `input ${i}: ${verdict}`, txId);
    }
    return {
      txId,
      rawHex: sub.rawHex.toLowerCase(),
      outpoints,
      spendable: outputs.filter((o) => isSpendableScript(o.scriptHex)),
      missingParents: [...missingParents],
    };
  }

  /** The UTXO decision of a validated transaction, atomically (`node-accept-7.lua`). */
  private async commit(checked: Checked): Promise<AcceptOutcome> {
    const { txId, outpoints, spendable } = checked;
    const k = this.keys;
    // Sent before the accept script on the same connection, so no status read sees the
    // transaction SEEN before its time; harmless when the script refuses it (read only with raw).
    const { timeToSeenMs } = this.o.realities;
    const seenAtMs = timeToSeenMs > 0 ? Date.now() + timeToSeenMs : undefined;
    const seenAtWritten = seenAtMs === undefined ? null : this.redis.hset(k.seenAt, txId, String(seenAtMs));
    const [reply, a, b] = await this.commands.nodeAccept(
      k.raw,
      k.spent,
      k.outputs,
      k.mempool,
      k.seq,
      k.mined,
      k.tip,
      txId,
      checked.rawHex,
      String(COINBASE_MATURITY),
      String(outpoints.length),
      ...outpoints,
      String(spendable.length),
      ...spendable.flatMap((o) => [outpointField(txId, o.vout), String(o.satoshis)]),
    );
    await seenAtWritten;
    switch (fromScriptReply('node-accept-7.lua', NODE_ACCEPT_REPLIES, reply)) {
      case 'accepted':
        return seenAtMs === undefined
          ? { kind: 'status', record: this.seen(txId), fresh: true }
          : { kind: 'status', record: this.beforeSeen(txId), fresh: true, seenAtMs };
      case 'known': {
        const now = await this.status(txId);
        return now
          ? { kind: 'status', record: now, fresh: false }
          : { kind: 'status', record: this.seen(txId), fresh: false };
      }
      case 'DOUBLE_SPEND': {
        const verdict: StoredVerdict = {
          txStatus: 'DOUBLE_SPEND_ATTEMPTED',
          extraInfo: `outpoint ${a ?? ''} is already spent by ${b ?? ''}`,
          competingTxs: [b ?? ''],
        };
        // First seen wins (the competitor keeps SEEN_ON_NETWORK, or is marked too as ARC marks
        // both sides); the verdict is kept so a re-POST or GET answers it, and the loser is
        // remembered under the winner: REJECTED once the winner is mined (the winner then MINED).
        const winner = b ?? '';
        const winnerVerdict: StoredVerdict | null = this.o.realities.doubleSpendMarksBoth
          ? {
              txStatus: 'DOUBLE_SPEND_ATTEMPTED',
              extraInfo: `transaction ${txId} tried to spend its input ${a ?? ''} too`,
              competingTxs: [txId],
            }
          : null;
        const tx = this.redis
          .multi()
          .hsetnx(k.verdicts, txId, JSON.stringify(verdict))
          .sadd(competitorsKey(k, winner), txId);
        if (winnerVerdict) tx.hsetnx(k.verdicts, winner, JSON.stringify(winnerVerdict));
        const replies = await tx.exec();
        const loser = { kind: 'status', record: this.fromVerdict(txId, verdict), fresh: true } as const;
        // Only the first double spend of a winner changes its status (later ones find it marked).
        return winnerVerdict && replies?.[2]?.[1] === 1
          ? { ...loser, alsoChanged: [this.fromVerdict(winner, winnerVerdict)] }
          : loser;
      }
      case 'SPENT_IN_BLOCK':
        return refuse(462, `input ${a ?? ''} is already spent by ${b ?? ''} in a block`, txId);
      case 'MISSING_INPUT':
        return refuse(462, `input ${a ?? ''} spends no known unspent output`, txId);
      case 'IMMATURE':
        return refuse(
          462,
          `input ${a ?? ''} spends the coinbase of block ${b ?? ''}, immature until the tip reaches ${Number(b) + COINBASE_MATURITY - 1}`,
          txId,
        );
    }
  }

  /** The status of a known transaction, or null (ARC's 404). */
  async status(txId: string): Promise<TxStatusRecord | null> {
    const [record] = await this.statusMany([txId]);
    return record ?? null;
  }

  /** {@link status} of many transactions in one pipeline. */
  async statusMany(txIds: readonly string[]): Promise<(TxStatusRecord | null)[]> {
    const k = this.keys;
    const pipeline = this.redis.pipeline();
    // The time to SEEN is read only while that reality is on (a status read is on every hot path).
    // Likewise the orphans, while EF orphans are held.
    const timed = this.o.realities.timeToSeenMs > 0;
    const orphans = this.o.strictness.efOrphans;
    const per = 3 + (timed ? 1 : 0) + (orphans ? 1 : 0);
    for (const txId of txIds) {
      pipeline.hget(k.mined, txId).hexists(k.raw, txId).hget(k.verdicts, txId);
      if (timed) pipeline.hget(k.seenAt, txId);
      if (orphans) pipeline.hexists(k.orphans, txId);
    }
    const values = ((await pipeline.exec()) ?? []).map(([err, v]) => {
      if (err) throw err;
      return v;
    });
    const now = Date.now();
    return txIds.map((txId, i) => {
      const [mined, raw, verdict, ...extra] = values.slice(per * i, per * i + per);
      const seenAt = timed ? extra[0] : null;
      const orphan = orphans ? extra[timed ? 1 : 0] : 0;
      if (typeof mined === 'string') return this.minedRecord(txId, mined);
      // Before raw: a stored transaction may carry a verdict too (the first spender of a double
      // spend when both sides are marked).
      if (typeof verdict === 'string') return this.fromVerdict(txId, JSON.parse(verdict) as StoredVerdict);
      if (raw === 1)
        return typeof seenAt === 'string' && Number(seenAt) > now ? this.beforeSeen(txId) : this.seen(txId);
      if (orphan === 1) return this.orphan(txId);
      return null;
    });
  }

  private seen(txId: string): TxStatusRecord {
    return {
      txid: txId,
      txStatus: 'SEEN_ON_NETWORK',
      blockHash: null,
      blockHeight: null,
      merklePath: '',
      extraInfo: '',
      competingTxs: null,
    };
  }

  /** An EF transaction held until its unknown parent is accepted. */
  private orphan(txId: string): TxStatusRecord {
    return { ...this.seen(txId), txStatus: 'SEEN_IN_ORPHAN_MEMPOOL' };
  }

  /** An accepted transaction not yet SEEN_ON_NETWORK (the time-to-SEEN reality). */
  private beforeSeen(txId: string): TxStatusRecord {
    return { ...this.seen(txId), txStatus: this.o.realities.statusBeforeSeen };
  }

  private fromVerdict(txId: string, v: StoredVerdict): TxStatusRecord {
    return {
      txid: txId,
      txStatus: v.txStatus,
      blockHash: null,
      blockHeight: null,
      merklePath: '',
      extraInfo: v.extraInfo,
      competingTxs: v.competingTxs,
    };
  }

  private minedRecord(txId: string, value: string): TxStatusRecord {
    const [blockHash, height, index, nodes] = value.split('|') as [string, string, string, string];
    const proof = tscProof(Number(index), txId, '', nodes === '' ? [] : nodes.split(','));
    let merklePath = tscToBumpHex(proof, Number(height));
    if (this.o.corruptBump()) merklePath = corruptHex(merklePath);
    return {
      txid: txId,
      txStatus: 'MINED',
      blockHash,
      blockHeight: Number(height),
      merklePath,
      extraInfo: '',
      competingTxs: null,
    };
  }

  // ---------------------------------------------------------------- blocks

  /** Mines one block with the whole mempool (the genesis block first on an empty chain). */
  async mineBlock(): Promise<MinedBlock> {
    const r = await this.producer.produceBlock(this.o.clock.now());
    if (r.status !== 'produced') throw new Error(`block not committed: ${r.reason}`);
    const txIds = await this.redis.hget(this.keys.blockTxIds, r.hash);
    return { hash: r.hash, height: r.height, txIds: (txIds ?? '').split(',') };
  }

  /**
   * Replaces the tip block by a sibling at the same height with the same transactions and a new
   * coinbase (new Merkle root, new hash, new proofs).
   * @throws Error on an empty chain or when the tip moved meanwhile.
   */
  async reorgLastBlock(): Promise<{ oldHash: string; newHash: string; height: number; txIds: string[] }> {
    const tip = await this.redis.hgetall(this.keys.tip);
    const oldHash = tip['hash'];
    if (!oldHash) throw new Error('no block to reorg');
    const height = Number(tip['height']);
    const [headerHex, txIdsCsv] = await Promise.all([
      this.redis.hget(this.keys.headers, oldHash),
      this.redis.hget(this.keys.blockTxIds, oldHash),
    ]);
    if (!headerHex || !txIdsCsv) throw new Error(`tip block ${oldHash} is incomplete`);
    const old = parseHeader(headerHex);
    const [oldCoinbase, ...rest] = txIdsCsv.split(',') as [string, ...string[]];
    const coinbase = buildCoinbaseTo(
      height,
      this.o.coinbaseLockingScriptHex,
      `proofline devnet reorg ${randomBytes(4).toString('hex')}`,
    );
    const txIds = [coinbase.txId, ...rest];
    const { root, branches } = merkleBranches(txIds);
    const time = Math.max(Math.floor(this.o.clock.now().getTime() / 1000), old.time);
    const mined = mineHeader({
      version: DEVNET_BLOCK_VERSION,
      prevHash: old.prevHash,
      merkleRoot: root,
      time,
      bits: old.bits,
      nonce: 0,
    });
    const k = this.keys;
    const [reply, detail] = await this.commands.reorgTip(
      k.tip,
      ...blockContentKeys(k),
      oldHash,
      mined.hash,
      String(height),
      String(time),
      mined.hex,
      oldCoinbase,
      outpointField(oldCoinbase, 0),
      coinbase.txId,
      coinbase.rawHex,
      outpointField(coinbase.txId, 0),
      String(DEVNET_SUBSIDY),
      ...blockTxArgs(mined.hash, height, txIds, branches),
    );
    if (fromScriptReply('reorg-tip-8.lua', REORG_TIP_REPLIES, reply) !== 'committed')
      throw new Error(`reorg refused: the tip moved to ${String(detail)}`);
    return { oldHash, newHash: mined.hash, height, txIds };
  }

  /**
   * Double-spend losers whose competitor is now mined become REJECTED (as ARC resolves a
   * DOUBLE_SPEND_ATTEMPTED once one side is mined). Returns their new records (for callbacks).
   */
  async resolveDoubleSpends(blockHash: string, minedTxIds: readonly string[]): Promise<TxStatusRecord[]> {
    if (minedTxIds.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const id of minedTxIds) pipe.smembers(competitorsKey(this.keys, id));
    const replies = (await pipe.exec()) ?? [];
    const out: TxStatusRecord[] = [];
    for (const [i, [err, losers]] of replies.entries()) {
      if (err) throw err;
      const winner = minedTxIds[i] as string;
      for (const loser of losers as string[]) {
        const verdict: StoredVerdict = {
          txStatus: 'REJECTED',
          extraInfo: `double spend: the competing transaction ${winner} was mined in block ${blockHash}`,
          competingTxs: [winner],
        };
        await this.redis.hset(this.keys.verdicts, loser, JSON.stringify(verdict));
        out.push(this.fromVerdict(loser, verdict));
      }
    }
    return out;
  }

  /** The main-chain block at `height` (hash and txIds, coinbase first), or null. */
  async blockAt(height: number): Promise<{ hash: string; txIds: string[] } | null> {
    const hash = await this.redis.hget(this.keys.hashes, String(height));
    const txIds = hash ? await this.redis.hget(this.keys.blockTxIds, hash) : null;
    return hash && txIds ? { hash, txIds: txIds.split(',') } : null;
  }

  /** Tip height, -1 on an empty chain. */
  async tipHeight(): Promise<number> {
    const h = await this.redis.hget(this.keys.tip, 'height');
    return h === null ? -1 : Number(h);
  }

  async chainInfo(): Promise<{ height: number; hash: string; time: number } | null> {
    const t = await this.redis.hgetall(this.keys.tip);
    return t['hash'] ? { height: Number(t['height']), hash: t['hash'], time: Number(t['time']) } : null;
  }

  /** A block's header as WhatsOnChain shows it; confirmations -1 when it left the main chain. */
  async headerJson(hash: string): Promise<Record<string, unknown> | null> {
    const k = this.keys;
    const [headerHex, height, tipHeight] = await Promise.all([
      this.redis.hget(k.headers, hash),
      this.redis.hget(k.heights, hash),
      this.tipHeight(),
    ]);
    if (!headerHex || height === null) return null;
    const [onMain, next, txIds] = await Promise.all([
      this.redis.hget(k.hashes, height),
      this.redis.hget(k.hashes, String(Number(height) + 1)),
      this.redis.hget(k.blockTxIds, hash),
    ]);
    const h = parseHeader(headerHex);
    const main = onMain === hash;
    return {
      hash,
      confirmations: main ? tipHeight - Number(height) + 1 : -1,
      height: Number(height),
      version: h.version,
      versionHex: (h.version >>> 0).toString(16).padStart(8, '0'),
      merkleroot: h.merkleRoot,
      num_tx: txIds ? txIds.split(',').length : 0,
      time: h.time,
      mediantime: h.time,
      nonce: h.nonce,
      bits: h.bits.toString(16).padStart(8, '0'),
      previousblockhash: Number(height) === 0 ? null : h.prevHash,
      ...(main && next ? { nextblockhash: next } : {}),
    };
  }

  /** The coinbase of the main-chain block at `height`, or null beyond the tip. */
  async coinbaseAt(height: number): Promise<{ height: number; blockHash: string; txid: string; hex: string } | null> {
    const blockHash = await this.redis.hget(this.keys.hashes, String(height));
    if (!blockHash) return null;
    const txIds = await this.redis.hget(this.keys.blockTxIds, blockHash);
    const txid = txIds?.split(',')[0];
    if (!txid) return null;
    const hex = await this.redis.hget(this.keys.raw, txid);
    return hex ? { height, blockHash, txid, hex } : null;
  }
}

interface SdkViews {
  readonly inputs: TransactionInput[];
  readonly outputs: TransactionOutput[];
}

/**
 * The transaction's inputs and outputs as the interpreter takes them. Scripts are handed over
 * unparsed (the sdk parses them lazily), so a 1 MiB data output is not chunked.
 */
function sdkViews(wire: WireTx): SdkViews {
  return {
    outputs: wire.outputs.map((o) => ({
      satoshis: o.satoshis,
      lockingScript: new LockingScript([], new Uint8Array(o.script), undefined, false),
    })),
    inputs: wire.inputs.map((i) => ({
      sourceTXID: i.sourceTXID,
      sourceOutputIndex: i.sourceOutputIndex,
      sequence: i.sequence,
      unlockingScript: new UnlockingScript([], new Uint8Array(i.script), undefined, false),
    })),
  };
}

/** Runs one input through the sdk's interpreter (ECDSA by libsecp256k1); true or the reason it fails. */
function verifyInput(
  tx: WireTx,
  inputs: TransactionInput[],
  outputs: TransactionOutput[],
  inputIndex: number,
  spent: WireOutput,
): true | string {
  const input = inputs[inputIndex] as TransactionInput;
  const wireInput = tx.inputs[inputIndex] as WireInput;
  try {
    const spend = withNativeChecksig(
      new Spend({
        sourceTXID: wireInput.sourceTXID,
        sourceOutputIndex: wireInput.sourceOutputIndex,
        sourceSatoshis: spent.satoshis,
        lockingScript: new LockingScript([], new Uint8Array(spent.script), undefined, false),
        transactionVersion: tx.version,
        otherInputs: inputs.filter((_, j) => j !== inputIndex),
        outputs,
        unlockingScript: input.unlockingScript as UnlockingScript,
        inputSequence: wireInput.sequence,
        inputIndex,
        lockTime: tx.lockTime,
      }),
    );
    return spend.validate() ? true : 'script evaluated to false';
  } catch (e) {
    return `script failed: ${(e as Error).message.slice(0, 200)}`;
  }
}

/** Flips the last hex digit: still a parseable BUMP, but its root no longer matches (fault switch). */
function corruptHex(hex: string): string {
  const last = hex.slice(-1);
  return hex.slice(0, -1) + (last === '0' ? '1' : '0');
}
