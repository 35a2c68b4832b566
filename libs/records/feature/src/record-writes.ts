import { randomUUID } from 'node:crypto';
import type { Clock } from '@proofline/shared-config';
import { AppError, forbidden, unavailable } from '@proofline/shared-errors';
import type { Logger } from '@proofline/shared-logger';
import type { BuiltTransaction, RecordTxRequest, TransactionBuilder } from '@proofline/chain-domain';
import { FROM_FREE } from '@proofline/chain-wallet';
import type { FundingPool, FundingUtxo, PoolCounters, WritePolicy } from '@proofline/chain-wallet';
import {
  applyEncoding,
  generateUpdateToken,
  hashUpdateToken,
  invalidUpdateToken,
  parseTxId,
  updateTokenHashOf,
} from '@proofline/records-domain';
import type { EncodeStep, RecordKind } from '@proofline/records-domain';
import type { AcceptOutcome, NewRecord, PoolCommitCall, RecordStore } from '@proofline/records-data-access';
import { encodeSteps, requireBody, requireFamily, requireFeature, txNotFound, wrongFamily } from './guards';
import type {
  Caller,
  IndependentWriteResult,
  LinkedWriteResult,
  PublishQueue,
  RecordsConfig,
  WriteInput,
} from './types';

/** Where a write's funding comes from: the wallet's UTXO pool and the current fee rate. */
export interface RecordFunding {
  readonly pool: FundingPool;
  /** Satoshis per 1000 bytes for a new transaction. MUST NOT wait for ARC (a cached policy or the floor). */
  feeRate(): number;
  /**
   * Whether ARC's policy is known and the size limits a record's transaction must keep. MUST NOT
   * wait for ARC. Absent: no limits and never unknown (specs without ARC).
   */
  policy?(): WritePolicy;
  /** Best effort, not awaited by the write: asks the wallet worker for an upkeep run (the pool ran dry). */
  requestUpkeep?(): Promise<void>;
  /** Lease lifetime of a reservation (default the pool's 30 s). */
  readonly leaseMs?: number;
  /**
   * Take funding straight from the pool's free set (one round trip per write: the accept script
   * spends the UTXO only if it is still free) before falling back to a reservation. Off when
   * absent: every write reserves first.
   */
  readonly takeFromFree?: TakeFromFree;
}

export interface RecordWritesDeps {
  readonly config: RecordsConfig;
  readonly clock: Clock;
  readonly store: RecordStore;
  readonly builder: TransactionBuilder;
  readonly funding: RecordFunding;
  readonly queue: PublishQueue;
  readonly logger?: Logger;
}

/** How often a write builds again after its funding lease was lost (the lease outlived the write). */
const LEASE_LOST_ATTEMPTS = 3;
/** How many UTXOs taken from free a write tries (each `TAKEN` by a faster writer) before it reserves. */
const FROM_FREE_ATTEMPTS = 3;
/**
 * How many partitions a root tries for funding (its own, then the next ones round robin) before
 * it reads the shards' counters to find one with funding (a few exhausted shards cost no read).
 */
const ROOT_PARTITION_ATTEMPTS = 4;
/**
 * Free UTXOs moved into a chain's exhausted shard for its successor (the first funds it, the
 * rest the chain's next versions): a chain stays in its partition, so its funding comes to it.
 */
const SUCCESSOR_TOP_UP = 4;
/** Rounds of that top-up a successor tries while concurrent writers take what was moved. */
const TOP_UP_ROUNDS = 4;
/**
 * Rounds of a root's fallback over every shard (each reads the shards' counters again) while
 * concurrent writers take the UTXOs it found: a round fails only when others emptied every shard
 * it asked, so a pool with a UTXO per writer funds every writer within a few rounds.
 */
const ROOT_FALLBACK_ROUNDS = 8;
/** Shards a round of a fallback (root or top-up) asks, most free UTXOs first, before it reads the shards again. */
const FALLBACK_DONORS = 8;
/** How long a read of the shards' free UTXOs serves other exhausted writes of the process. */
const SHARD_LEVELS_FRESH_MS = 25;
/** Retry-After of a 503 FUNDING_EXHAUSTED: about one upkeep run (a split is spendable once ARC has seen it). */
export const FUNDING_RETRY_AFTER_SECONDS = 5;
/**
 * Retry-After of a 409 CHAIN_UNCONFIRMED_DEPTH: the chain's earliest versions confirm with the
 * next block that includes them (about every 10 minutes on mainnet); retrying more often than
 * once a minute only repeats the refusal.
 */
export const CHAIN_DEPTH_RETRY_AFTER_SECONDS = 60;
/**
 * Bytes a data output's script adds to the data: `OP_FALSE OP_RETURN` and a push prefix of at
 * most 5 bytes (OP_PUSHDATA4). An upper bound, so a record refused for the script limit is at
 * most 5 bytes short of it.
 */
const DATA_SCRIPT_OVERHEAD = 7;

/**
 * What an update or delete needs of the record it links to: fields fixed when that record was
 * accepted and never changed afterwards (records are never removed), so a process may remember
 * them. Whether the record is still the end of its chain, its token and its tenant are NOT here:
 * the accept script decides those, atomically with the write.
 */
interface LinkTarget {
  readonly chainId: string;
  /** The chain's records partition: where its successors go. */
  readonly unit: string;
  readonly linkVout: number;
  readonly linkSatoshis: number;
}

/** Link targets one process remembers (~200 B each); the oldest are forgotten first. */
const LINK_TARGETS_KEPT = 10_000;

/** A built transaction and the stored record it becomes. */
interface Candidate {
  readonly tx: BuiltTransaction;
  readonly record: NewRecord;
}

/**
 * The records write use cases (REST only). Each validates its raw inputs, takes one funding UTXO
 * from the wallet's pool (sampled from free, or reserved), builds and signs the transaction with
 * it, stores it with one accept script (record + raw transaction + outbox entry + the pool's
 * commit, atomically) and then enqueues its publication. Throws {@link AppError} for refusals.
 */
export class RecordWrites {
  /**
   * Link targets of linked records this process accepted or read (insertion order = age). A
   * client updating its chain through one keep-alive connection finds the record it just wrote
   * here: its update makes one Redis round trip fewer. A miss reads the record (`meta`).
   */
  private readonly linkTargets = new Map<string, LinkTarget>();
  /** Funding sampled from free for this process's writes, per partition (empty: every write reserves). */
  private readonly free = new Map<string, FreeFunding>();
  /** The shards' free UTXOs as last read (or being read), shared by exhausted writes: {@link shardLevels}. */
  private levels: { readonly at: number; readonly value: Promise<PoolCounters[]> } | null = null;

  constructor(private readonly deps: RecordWritesDeps) {}

  /** The free-funding stock of partition `unit`, or null when writes reserve. */
  private freeOf(unit: string): FreeFunding | null {
    const { takeFromFree } = this.deps.funding;
    if (!takeFromFree) return null;
    let stock = this.free.get(unit);
    if (!stock) {
      stock = new FreeFunding(this.deps.funding.pool, takeFromFree, unit);
      this.free.set(unit, stock);
    }
    return stock;
  }

  /** POST /records. */
  async writeIndependent(caller: Caller, input: WriteInput): Promise<IndependentWriteResult> {
    const { config, store } = this.deps;
    const steps = encodeSteps(config, input.encode);
    const encoded = applyEncoding(steps, requireBody(config, input.body));
    const tx = await this.fundedAccept(
      { kind: 'independent', data: encoded.bytes, contentType: encoded.contentType },
      (built) => this.newRecord(caller, 'independent', built, encoded.contentType, steps, encoded.bytes, null),
      (record, pool) => store.acceptRoot(record, pool, this.acceptOptions),
    );
    return { txId: tx.txId, encoding: encoded.encoding };
  }

  /** POST /linkedrecords. */
  async createLinked(caller: Caller, input: WriteInput): Promise<LinkedWriteResult> {
    const { config, store } = this.deps;
    requireFeature(config, 'linked');
    const steps = encodeSteps(config, input.encode);
    const encoded = applyEncoding(steps, requireBody(config, input.body));
    const updateToken = generateUpdateToken();
    const tx = await this.fundedAccept(
      { kind: 'create', data: encoded.bytes, contentType: encoded.contentType },
      (built) =>
        this.newRecord(
          caller,
          'create',
          built,
          encoded.contentType,
          steps,
          encoded.bytes,
          hashUpdateToken(updateToken),
        ),
      (record, pool) => store.acceptRoot(record, pool, this.acceptOptions),
    );
    this.remember(tx, tx.txId, tx.unit);
    return { txId: tx.txId, updateToken, encoding: encoded.encoding };
  }

  /** POST /linkedrecords/:txId/update. */
  async updateLinked(
    caller: Caller,
    prevTxIdRaw: unknown,
    input: WriteInput & { readonly updateToken: string | undefined },
  ): Promise<LinkedWriteResult> {
    const { config, store } = this.deps;
    requireFeature(config, 'linked');
    const prevTxId = parseTxId(prevTxIdRaw);
    const tokenHash = input.updateToken === undefined ? null : updateTokenHashOf(input.updateToken);
    const steps = encodeSteps(config, input.encode);
    const body = requireBody(config, input.body);
    const prev = await this.linkablePrevious(prevTxId);
    const encoded = applyEncoding(steps, body);
    const updateToken = generateUpdateToken();
    const link = { prevTxId, chainId: prev.chainId, tokenHash, callerTenant: caller.tenant };
    const tx = await this.fundedAccept(
      {
        kind: 'update',
        data: encoded.bytes,
        contentType: encoded.contentType,
        spends: { txId: prevTxId, vout: prev.linkVout, satoshis: prev.linkSatoshis },
      },
      (built) =>
        this.newRecord(
          caller,
          'update',
          built,
          encoded.contentType,
          steps,
          encoded.bytes,
          hashUpdateToken(updateToken),
        ),
      (record, pool) => store.acceptSuccessor(record, link, pool, this.acceptOptions),
      { prevTxId, unit: prev.unit },
    );
    this.remember(tx, prev.chainId, prev.unit);
    return { txId: tx.txId, updateToken, encoding: encoded.encoding };
  }

  /** POST /linkedrecords/:txId/delete. */
  async deleteLinked(
    caller: Caller,
    prevTxIdRaw: unknown,
    input: { readonly updateToken: string | undefined },
  ): Promise<{ txId: string }> {
    const { config, store } = this.deps;
    requireFeature(config, 'linked');
    const prevTxId = parseTxId(prevTxIdRaw);
    const tokenHash = input.updateToken === undefined ? null : updateTokenHashOf(input.updateToken);
    const prev = await this.linkablePrevious(prevTxId);
    const link = { prevTxId, chainId: prev.chainId, tokenHash, callerTenant: caller.tenant };
    const tx = await this.fundedAccept(
      { kind: 'delete', spends: { txId: prevTxId, vout: prev.linkVout, satoshis: prev.linkSatoshis } },
      (built) => this.newRecord(caller, 'delete', built, 'application/octet-stream', [], new Uint8Array(0), null),
      (record, pool) => store.acceptSuccessor(record, link, pool, this.acceptOptions),
      { prevTxId, unit: prev.unit },
    );
    return { txId: tx.txId };
  }

  /**
   * The partitions a root tries, in order: the next of the round robin, then the ones after it
   * (the round robin advances by one a root, so that concurrent roots start apart).
   */
  private rootPartitions(): string[] {
    const { partitions } = this.deps.store;
    const start = partitions.next();
    return Array.from({ length: Math.min(ROOT_PARTITION_ATTEMPTS, partitions.count) }, (_, i) =>
      partitions.unit((start + i) % partitions.count),
    );
  }

  /** Back-pressure: how many accepted records may wait for publication; how deep a chain's unconfirmed versions may go. */
  private get acceptOptions(): { maxPending: number; maxUnconfirmed: number } {
    return {
      maxPending: this.deps.config.maxPendingPublications,
      maxUnconfirmed: this.deps.config.maxUnconfirmedLinks,
    };
  }

  /**
   * The previous record must exist and be linked. Token, tenant and end-of-chain are decided by
   * the accept script alone, atomically with the write, so that concurrent writers agree.
   */
  private async linkablePrevious(prevTxId: string): Promise<LinkTarget> {
    const known = this.linkTargets.get(prevTxId);
    if (known) return known;
    const { store } = this.deps;
    const meta = requireFamily(await store.meta(prevTxId), 'linked', prevTxId);
    // Every version of a chain lives in its create's partition (cached by the meta read above).
    const unit = await store.partitionOf(meta.chainId);
    if (unit === null) throw new Error(`record ${prevTxId} has no partition for its chain ${meta.chainId}`);
    const target = {
      chainId: meta.chainId,
      unit,
      linkVout: meta.linkVout ?? 0,
      linkSatoshis: meta.linkSatoshis ?? 0,
    };
    // A delete has no link output: nothing can spend it (the accept script answers NOT_END).
    if (meta.linkVout !== null) this.keep(prevTxId, target);
    return target;
  }

  /** Remembers an accepted linked record that a later update or delete may spend. */
  private remember(tx: BuiltTransaction, chainId: string, unit: string): void {
    if (tx.linkOutput)
      this.keep(tx.txId, { chainId, unit, linkVout: tx.linkOutput.vout, linkSatoshis: tx.linkOutput.satoshis });
  }

  private keep(txId: string, target: LinkTarget): void {
    if (this.linkTargets.size >= LINK_TARGETS_KEPT) {
      const oldest = this.linkTargets.keys().next();
      if (!oldest.done) this.linkTargets.delete(oldest.value);
    }
    this.linkTargets.set(txId, target);
  }

  /** The stored form of a record whose transaction `tx` was just built and signed. */
  private newRecord(
    caller: Caller,
    kind: RecordKind,
    tx: BuiltTransaction,
    contentType: string,
    steps: readonly EncodeStep[],
    bytes: Uint8Array,
    tokenHash: string | null,
  ): NewRecord {
    return {
      txId: tx.txId,
      kind,
      tenant: caller.tenant,
      contentType,
      encoders: steps.map((s) => s.encoder),
      bytes,
      rawTx: tx.rawTx,
      ...(tx.ef ? { ef: tx.ef } : {}),
      link: tx.linkOutput ? { vout: tx.linkOutput.vout, satoshis: tx.linkOutput.satoshis } : null,
      tokenHash,
      acceptedAt: this.deps.clock.now(),
    };
  }

  /**
   * The funded write: funding → build and sign with it → the accept script stores the record AND
   * spends the funding UTXO (change pending) → hand it to the publication queue (not awaited).
   * A successor (`chain`) is written in its chain's partition and funded from that partition's
   * shard; a root goes to the next partition round robin, to the following ones when that
   * one's shard is exhausted (at most {@link ROOT_PARTITION_ATTEMPTS}), then to any whose shard
   * has a free UTXO.
   * Funding is, first, a UTXO this process sampled from the pool's free set, spent by the accept
   * script only if it is still free (one round trip for the whole write; `TAKEN` when another
   * writer was faster: build again with another, at most {@link FROM_FREE_ATTEMPTS} times); else,
   * or when `takeFromFree` is off, a reservation (one more round trip: a lease, committed by the
   * accept script).
   *
   * - Pool empty (no shard has a UTXO for it; a successor's shard is topped up from the richest
   *   first): 503 `FUNDING_EXHAUSTED` with `Retry-After`, nothing stored, upkeep requested.
   * - A record-level refusal (NOT_END, TOKEN_INVALID, FORBIDDEN, BACKPRESSURE, …) stored nothing:
   *   a reserved UTXO goes back to free before the error is thrown (one taken from free never left it).
   * - `LEASE_LOST` (the lease expired before the script ran; the UTXO may fund another write now)
   *   and `TAKEN`: this transaction MUST NOT be published; build again with other funding.
   * - A Redis error during the accept is ambiguous (the script may have run): a lease is left to
   *   expire, never released (a committed UTXO is not leased any more, so expiry cannot free it).
   */
  private async fundedAccept(
    request: Omit<RecordTxRequest, 'funding' | 'satoshisPerKilobyte'>,
    toRecord: (tx: BuiltTransaction) => NewRecord,
    accept: (record: NewRecord, pool: PoolCommitCall) => Promise<AcceptOutcome>,
    chain?: { readonly prevTxId: string; readonly unit: string },
  ): Promise<BuiltTransaction & { readonly unit: string }> {
    const { builder, funding, store } = this.deps;
    const { pool } = funding;
    const prevTxId = chain?.prevTxId;
    const limits = this.policyLimits(request.data?.byteLength ?? 0);
    let leaseLost = 0;
    let taken = 0;
    for (;;) {
      const priced = { ...request, satoshisPerKilobyte: funding.feeRate() };
      const units = chain ? [chain.unit] : this.rootPartitions();
      const { owner, utxos, unit } = await this.funding(
        builder.fundingNeeded(priced),
        taken < FROM_FREE_ATTEMPTS,
        units,
        chain !== undefined,
      ).catch(async (err: unknown) => {
        // No funding for a successor whose previous record is not the end any more (concurrent
        // updates of one chain, a shard emptied by them): the refusal the accept would give.
        if (chain && err instanceof AppError && err.errorCode === 'FUNDING_EXHAUSTED') {
          const prev = await store.meta(chain.prevTxId);
          if (prev?.nextTxId) throw acceptRefusal('NOT_END', chain.prevTxId, chain.prevTxId);
        }
        throw err;
      });
      let built: Candidate;
      try {
        const tx = builder.build({ ...priced, funding: utxos });
        if (limits.maxTxBytes !== null && tx.rawTx.byteLength > limits.maxTxBytes)
          throw tooLargeForPolicy(
            `its transaction would be ${tx.rawTx.byteLength} bytes`,
            limits.maxTxBytes,
            'maxtxsizepolicy',
          );
        built = { tx, record: toRecord(tx) };
      } catch (err) {
        await this.release(owner, utxos, unit);
        throw err;
      }
      const { tx } = built;
      const outcome = await accept(built.record, {
        unit,
        keys: pool.commitKeys(tx.txId, unit),
        args: pool.commitArgs({ txId: tx.txId, owner, inputs: utxos, outputs: tx.change ? [tx.change] : [] }),
      });
      if (outcome === 'OK') {
        // Not awaited: the record and its outbox entry are durable now, which is what the 200
        // promises; the queue only makes publication prompt (see enqueue).
        // The partition rides with the job (none with one partition: the publisher needs no index).
        this.enqueue(tx.txId, pool.partitions.single ? undefined : unit);
        return { ...tx, unit };
      }
      if (outcome === 'TAKEN') {
        taken++;
        continue;
      }
      if (outcome === 'LEASE_LOST') {
        this.deps.logger?.warn(
          { txId: tx.txId, attempt: leaseLost + 1 },
          'funding lease lost before the accept; building again (this transaction is never published)',
        );
        if (++leaseLost < LEASE_LOST_ATTEMPTS) continue;
      } else {
        await this.release(owner, utxos, unit);
      }
      throw acceptRefusal(outcome, tx.txId, prevTxId);
    }
  }

  /**
   * ARC's policy before any funding is touched: 503 `FEE_POLICY_UNKNOWN` (Retry-After) while it
   * is unknown outside the devnet (a transaction priced at the floor could be refused for good,
   * 465); 413 `RECORD_TOO_LARGE_FOR_POLICY` when `dataBytes` alone break a size limit. The
   * transaction's exact size is checked once built ({@link fundedAccept}).
   */
  private policyLimits(dataBytes: number): { maxTxBytes: number | null } {
    const policy = this.deps.funding.policy?.();
    if (!policy) return { maxTxBytes: null };
    if (!policy.known)
      throw unavailable(
        'FEE_POLICY_UNKNOWN',
        "ARC's fee policy (GET /v1/policy) is not known yet, so this record's fee cannot be set; nothing was stored. Retry after the Retry-After delay.",
        policy.retryAfterSeconds,
      );
    const script = dataBytes + DATA_SCRIPT_OVERHEAD;
    if (dataBytes > 0 && policy.maxScriptBytes !== null && script > policy.maxScriptBytes)
      throw tooLargeForPolicy(
        `its data output script would be up to ${script} bytes`,
        policy.maxScriptBytes,
        'maxscriptsizepolicy',
      );
    if (policy.maxTxBytes !== null && script > policy.maxTxBytes)
      throw tooLargeForPolicy(`its transaction would exceed ${script} bytes`, policy.maxTxBytes, 'maxtxsizepolicy');
    return { maxTxBytes: policy.maxTxBytes };
  }

  /**
   * One UTXO worth `minSatoshis` for a write, from the first of `units` (records partitions) whose
   * shard has one: from the process's free sample of it when `fromFree` (owner `FROM_FREE`), else,
   * or when the sample has none, reserved under a fresh owner. When none of them has one (only
   * then: the counters are read on this path alone), a root takes one from any shard that has
   * one ({@link rootFallback}) and a chain's successor has some moved into its chain's shard
   * ({@link topUp}).
   * @throws AppError 503 `FUNDING_EXHAUSTED` (upkeep requested) when no shard has one.
   */
  private async funding(
    minSatoshis: number,
    fromFree: boolean,
    units: readonly string[],
    chain: boolean,
  ): Promise<{ owner: string; utxos: FundingUtxo[]; unit: string }> {
    const found =
      (await this.fundingFrom(minSatoshis, fromFree, units)) ??
      (this.deps.funding.pool.partitions.count === 1
        ? null
        : chain
          ? await this.topUp(minSatoshis, units[0] as string)
          : await this.rootFallback(minSatoshis, units));
    if (found) return found;
    this.requestUpkeep();
    throw unavailable(
      'FUNDING_EXHAUSTED',
      'The funding wallet has no spendable UTXO for this record right now; nothing was stored. Retry after the Retry-After delay.',
      FUNDING_RETRY_AFTER_SECONDS,
    );
  }

  /** {@link funding} from `units` alone, in order: null when none of their shards has a UTXO for it. */
  private async fundingFrom(
    minSatoshis: number,
    fromFree: boolean,
    units: readonly string[],
  ): Promise<{ owner: string; utxos: FundingUtxo[]; unit: string } | null> {
    const { pool, leaseMs } = this.deps.funding;
    for (const unit of units) {
      const stock = fromFree ? this.freeOf(unit) : null;
      const candidate = stock ? await stock.take(minSatoshis) : null;
      if (candidate) return { owner: FROM_FREE, utxos: [candidate], unit };
      const owner = randomUUID();
      const reserved = await pool.reserve({
        owner,
        count: 1,
        minSatoshis,
        partition: unit,
        ...(leaseMs === undefined ? {} : { leaseMs }),
      });
      if (reserved.status === 'reserved') return { owner, utxos: reserved.utxos, unit };
    }
    return null;
  }

  /**
   * A root whose partitions were all exhausted goes to any partition whose shard has a free UTXO:
   * the shards with the most free UTXOs first (not the most satoshis: the splitter's large inputs
   * are not where writes should go), read again each round while concurrent writers take what was
   * there, until a round finds no shard with a free UTXO. A root has no partition of its own to
   * keep, so no UTXO needs to move for it.
   */
  private async rootFallback(
    minSatoshis: number,
    tried: readonly string[],
  ): Promise<{ owner: string; utxos: FundingUtxo[]; unit: string } | null> {
    for (let round = 0; round < ROOT_FALLBACK_ROUNDS; round++) {
      // The first round skips the partitions just tried; later ones may find them refilled.
      const donors = await this.donors(minSatoshis, round === 0 ? tried : [], round > 0);
      if (donors.length === 0) return null;
      const found = await this.fundingFrom(minSatoshis, false, donors);
      if (found) return found;
    }
    return null;
  }

  /**
   * A chain's successor must stay in its chain's partition (`to`): it has a few free UTXOs moved
   * into that shard from the shards with the most (other writers may take them first: a few
   * rounds). Upkeep evens the shards out meanwhile.
   */
  private async topUp(
    minSatoshis: number,
    to: string,
  ): Promise<{ owner: string; utxos: FundingUtxo[]; unit: string } | null> {
    const { pool } = this.deps.funding;
    const below = this.deps.funding.takeFromFree?.belowSatoshis;
    for (let round = 0; round < TOP_UP_ROUNDS; round++) {
      const donors = await this.donors(minSatoshis, [to], round > 0);
      if (donors.length === 0) return null;
      // One that concurrent writers emptied meanwhile gives way to the next.
      for (const from of donors) {
        const moved = await pool.moveFree(from, to, {
          count: SUCCESSOR_TOP_UP,
          minSatoshis,
          ...(below === undefined || below <= minSatoshis ? {} : { belowSatoshis: below }),
        });
        if (moved === 0) continue;
        const found = await this.fundingFrom(minSatoshis, false, [to]);
        if (found) return found;
        break;
      }
    }
    return null;
  }

  /**
   * Up to {@link FALLBACK_DONORS} partitions whose shard holds a free UTXO that may fund
   * `minSatoshis` (by its counters: one HMGET per shard, shared by this process's exhausted writes
   * for a moment: {@link shardLevels}), `except` left out: those with the most
   * free UTXOs, from a random one of them on (so that concurrent writers start on different
   * shards).
   */
  private async donors(minSatoshis: number, except: readonly string[], fresh: boolean): Promise<string[]> {
    const { pool } = this.deps.funding;
    const pick = (free: readonly PoolCounters[]) =>
      free
        .map((f, i) => ({ ...f, unit: pool.partitions.unit(i) }))
        .filter((f) => f.count > 0 && f.satoshis >= minSatoshis && !except.includes(f.unit))
        .sort((a, b) => b.count - a.count)
        .slice(0, FALLBACK_DONORS)
        .map((f) => f.unit);
    // A shared read may predate a deposit or a split made since, or the takes of concurrent
    // writers: a round after the first reads afresh, and only a fresh read may say that no shard
    // has a UTXO (the answer that becomes 503 FUNDING_EXHAUSTED).
    let top = pick(await this.shardLevels(fresh));
    if (top.length === 0 && !fresh) top = pick(await this.shardLevels(true));
    const start = Math.floor(Math.random() * top.length);
    return [...top.slice(start), ...top.slice(0, start)];
  }

  /**
   * Every shard's free UTXOs (`freeByShard`, one HMGET per shard), one read for the
   * writes of this process that ask while it is in flight or within SHARD_LEVELS_FRESH_MS of its
   * answer: when the shards run dry, concurrent writes all reach the top-up, and each reading
   * every shard multiplied the commands per write. Advisory figures (which shard to take from);
   * a donor emptied meanwhile gives way to the next, as it would after a read of its own.
   * `fresh`: a new read whatever the last one's age (which the next writes then share).
   */
  private shardLevels(fresh = false): Promise<PoolCounters[]> {
    const now = performance.now();
    if (!fresh && this.levels && now - this.levels.at < SHARD_LEVELS_FRESH_MS) return this.levels.value;
    const entry = { at: now, value: this.deps.funding.pool.freeByShard() };
    this.levels = entry;
    entry.value.then(
      () => {
        // Fresh from the answer on, not from the ask.
        if (this.levels === entry) this.levels = { at: performance.now(), value: entry.value };
      },
      () => {
        if (this.levels === entry) this.levels = null;
      },
    );
    return entry.value;
  }

  /** Returns a reservation that stored nothing to the pool; a failure only delays it until the lease expires. */
  private async release(owner: string, utxos: readonly FundingUtxo[], unit: string): Promise<void> {
    // Taken from free without a lease: nothing to give back.
    if (owner === FROM_FREE) return;
    try {
      await this.deps.funding.pool.release(owner, utxos, { partition: unit });
    } catch (err) {
      this.deps.logger?.warn(
        { owner, err: err instanceof Error ? err.message : String(err) },
        'funding release failed; the lease expires instead',
      );
    }
  }

  private requestUpkeep(): void {
    const request = this.deps.funding.requestUpkeep;
    if (!request) return;
    request().catch((err: unknown) =>
      this.deps.logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'wallet upkeep request failed'),
    );
  }

  /**
   * Hands the record to the publication queue without waiting for it: the record is durable
   * (outbox) before this runs, so the response does not wait for the job's round trip. A failure
   * is logged, not returned: the publisher's outbox sweeper enqueues the record shortly.
   */
  private enqueue(txId: string, unit: string | undefined): void {
    this.deps.queue.enqueue(txId, unit).catch((err: unknown) => {
      this.deps.logger?.warn(
        { txId, err: err instanceof Error ? err.message : String(err) },
        'enqueue failed; the outbox sweeper will publish it',
      );
    });
  }
}

/** 413 RECORD_TOO_LARGE_FOR_POLICY: ARC's policy (`limitName` = `limit` bytes) refuses the transaction. */
function tooLargeForPolicy(what: string, limit: number, limitName: string): AppError {
  return new AppError({
    errorCode: 'RECORD_TOO_LARGE_FOR_POLICY',
    httpStatus: 413,
    detail: `This record cannot be published: ${what}, and ARC's policy accepts at most ${limit} (${limitName}); nothing was stored. Send a smaller record.`,
  });
}

/**
 * Every refusing accept-script outcome mapped to its error. Exhaustive: a new outcome does not
 * compile until it is mapped here. `EXISTS` (the freshly signed txId is already stored) and
 * `CHAIN_MISMATCH` (the previous record's chainId changed between the read and the script;
 * chainIds never change) both mean a broken invariant, not bad input: an explicit 500 whose
 * internal detail names the outcome. `LEASE_LOST` reaches here only after every rebuild lost
 * its lease (writes slower than the lease): a 503 with `Retry-After`, nothing stored.
 */
function acceptRefusal(
  outcome: Exclude<AcceptOutcome, 'OK' | 'TAKEN'>,
  txId: string,
  prevTxId: string | undefined,
): AppError {
  switch (outcome) {
    case 'TX_NOT_FOUND':
      return txNotFound(prevTxId ?? txId);
    case 'WRONG_FAMILY':
      return wrongFamily('linked');
    case 'TOKEN_INVALID':
      return invalidUpdateToken();
    case 'FORBIDDEN':
      return forbidden(
        'FORBIDDEN',
        'Without its updateToken only the tenant that created this linked record may update or delete it.',
      );
    case 'BACKPRESSURE':
      return unavailable(
        'PUBLICATION_BACKLOG_FULL',
        'Too many records are waiting for publication; nothing was stored. Retry after the Retry-After delay.',
        5,
      );
    case 'NOT_END':
      return new AppError({
        errorCode: 'NOT_LINKED_RECORDS_END',
        httpStatus: 409,
        detail:
          'This linked record is not the end of its chain (it was already updated or deleted); update the latest record.',
      });
    case 'CHAIN_DEPTH':
      return new AppError({
        errorCode: 'CHAIN_UNCONFIRMED_DEPTH',
        httpStatus: 409,
        detail:
          "This linked chain already holds as many unconfirmed versions as this deployment allows (MAX_UNCONFIRMED_LINKS, kept below the network's limit on unconfirmed ancestors); nothing was stored. Retry once a block has confirmed the chain's earlier versions.",
        headers: { 'Retry-After': String(CHAIN_DEPTH_RETRY_AFTER_SECONDS) },
      });
    case 'LEASE_LOST':
      return unavailable(
        'FUNDING_LEASE_EXPIRED',
        'The write took longer than its funding reservation; nothing was stored. Retry after the Retry-After delay.',
        1,
      );
    case 'EXISTS':
    case 'CHAIN_MISMATCH':
      return new AppError({
        errorCode: 'INTERNAL_ERROR',
        httpStatus: 500,
        detail: 'The record could not be stored.',
        internalDetail: `accept: ${outcome} for ${txId}`,
      });
  }
}

/** How a process takes write funding straight from the pool's free set (see {@link FreeFunding}). */
export interface TakeFromFree {
  /**
   * UTXOs sampled per round trip, for one partition's stock. Default {@link sampleSizeFor} the
   * partition count: 64 with one partition, fewer with many (each stock serves only its
   * partition's share of the process's writes, so a large one would go stale).
   */
  readonly sample?: number;
  /** Candidates sampled longer ago than this are dropped unused (default {@link STOCK_MAX_AGE_MS}). */
  readonly maxAgeMs?: number;
  /** Only UTXOs worth less than this are sampled: the denomination, not the splitter's reservoir. */
  readonly belowSatoshis?: number;
}

/** After a sample found nothing, writes go straight to the reservation path for this long. */
const EMPTY_BACKOFF_MS = 250;

/**
 * How long sampled candidates stay worth trying. Another process writing to the same shard takes
 * UTXOs from it all the time, so a candidate's chance of a `TAKEN` (a rebuild: building and
 * signing the transaction again) grows with its age: with 64 partitions a process's stock of one
 * shard used to last many seconds at a low write rate, and over half of the writes of a
 * `bench:cpu` run at 8 connections were rebuilt.
 */
export const STOCK_MAX_AGE_MS = 1000;

/**
 * The default sample of one partition's stock: a process's roots go round robin over the
 * partitions, so a stock serves one write in `partitions`; 512 / partitions keeps a stock's life
 * about the same in writes (8 at 64 partitions, 64 from 8 partitions down), at the cost of one
 * sample command per 8 writes at most.
 */
export function sampleSizeFor(partitions: number): number {
  return Math.min(64, Math.max(8, Math.ceil(512 / Math.max(1, partitions))));
}

/**
 * Candidate funding UTXOs of one process, sampled from one shard of the pool's free set without reserving
 * them. A write takes one, builds and signs with it, and its accept script spends it only if it
 * is still free (`FROM_FREE`, else `TAKEN`): one Redis round trip per write instead of a
 * reservation and then the accept. A stale candidate costs a rebuild, never a double spend.
 *
 * The stock is refilled by one `sampleFree` call for many writes (a random window of the free
 * set, so processes seldom sample the same UTXOs); writers that find it empty share that call.
 * `take` answers null when nothing qualifies: the caller reserves instead, which is also what
 * reports an exhausted pool. A failed sample fails the writes waiting for it.
 */
export class FreeFunding {
  private stock: FundingUtxo[] = [];
  /** When the stock was sampled (ms, `Date.now()`). */
  private sampledAt = 0;
  private refill: Promise<void> | null = null;
  private emptyUntil = 0;
  private readonly size: number;
  private readonly maxAgeMs: number;

  constructor(
    private readonly pool: FundingPool,
    private readonly options: TakeFromFree = {},
    /** The pool shard (records partition unit) sampled; default the pool's first. */
    private readonly partition?: string,
  ) {
    this.size = options.sample ?? sampleSizeFor(pool.partitions.count);
    if (!Number.isSafeInteger(this.size) || this.size < 1) throw new RangeError('sample must be a positive integer');
    this.maxAgeMs = options.maxAgeMs ?? STOCK_MAX_AGE_MS;
  }

  /** A candidate worth at least `minSatoshis`, or null (then reserve). Never the same one twice. */
  async take(minSatoshis: number): Promise<FundingUtxo | null> {
    for (let refills = 0; ; refills++) {
      const found = this.pop(minSatoshis);
      if (found || refills === 2 || Date.now() < this.emptyUntil) return found;
      this.refill ??= this.load(minSatoshis).finally(() => {
        this.refill = null;
      });
      await this.refill;
    }
  }

  private pop(minSatoshis: number): FundingUtxo | null {
    if (this.stock.length > 0 && Date.now() - this.sampledAt > this.maxAgeMs) this.stock = [];
    // A candidate too small for this write is dropped from the stock, not from the pool.
    for (let u = this.stock.pop(); u; u = this.stock.pop()) if (u.satoshis >= minSatoshis) return u;
    return null;
  }

  private async load(minSatoshis: number): Promise<void> {
    // A failure is the writes' failure (a Redis one answers 503 REDIS_UNAVAILABLE like any other
    // Redis call of the write): falling back to a reservation would make a write wait out a
    // second command timeout against a frozen Redis, past the operations issue's 2 s bound.
    const sample = await this.pool.sampleFree({
      ...(this.partition === undefined ? {} : { partition: this.partition }),
      count: this.size,
      minSatoshis,
      ...(this.options.belowSatoshis === undefined ? {} : { belowSatoshis: this.options.belowSatoshis }),
    });
    if (sample.length === 0) this.emptyUntil = Date.now() + EMPTY_BACKOFF_MS;
    this.sampledAt = Date.now();
    this.stock.push(...sample);
  }
}
