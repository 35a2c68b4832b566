import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RedisClient } from '@proofline/shared-redis';
import { systemClock } from '@proofline/shared-config';
import type { Clock } from '@proofline/shared-config';
import { PartitionIndex, Partitions, SINGLE_PARTITION_UNIT, keyTag, loadLuaCommands } from '@proofline/shared-redis';
import type { PartitionLayouts } from '@proofline/shared-redis';
import type { FundingUtxo } from './ports';

/**
 * Every Redis key of the funding wallet's shard in one records partition (`unit`, shared-redis
 * `Partitions`), built from the deployment's prefix. Nowhere else spells them. Outpoints are
 * `txId:vout` (lowercase display-order txId). A shard lives under its partition's tag
 * (`<prefix>:{<unit>}`) with the partition's records: the records accept scripts commit a
 * record's funding in the same call that stores it (commit-contract.ts), so on a Redis Cluster
 * they must share a slot. `feePolicy` and `scanHeight` are the deployment's, under `rec`
 * whatever the unit; the default unit `rec` is the one shard of `REDIS_PARTITIONS=1`.
 */
export function walletKeys(prefix: string, unit: string = SINGLE_PARTITION_UNIT) {
  const base = `${keyTag(prefix, unit)}:wallet`;
  const global = `${keyTag(prefix, SINGLE_PARTITION_UNIT)}:wallet`;
  return {
    /** ZSET member outpoint, score satoshis: UTXOs ready to fund a transaction. */
    free: `${base}:free`,
    /** ZSET member outpoint, score lease expiry (ms): UTXOs reserved by a writer. */
    leases: `${base}:leases`,
    /** HASH outpoint → lease owner (who may commit or release it). */
    owners: `${base}:owners`,
    /** HASH outpoint → satoshis, for every outpoint the pool tracks in any state. */
    sats: `${base}:sats`,
    /** HASH outpoint → txId of the transaction that spends it, until that transaction is confirmed or fails. */
    spent: `${base}:spent`,
    /** HASH outpoint → txId that creates it (change, split outputs) until that transaction is accepted by ARC. */
    pending: `${base}:pending`,
    /** HASH of balance counters: {free,leased,pending,spent}{Count,Sats}. */
    counters: `${base}:counters`,
    /** ZSET member txId, score commit time (ms): transactions committed against the pool and not yet settled. */
    txs: `${base}:txs`,
    /** HASH of one unsettled transaction: inputs, outputs, kind, owner, at, rawHex (splits only). */
    tx: (txId: string) => `${base}:tx:${txId}`,
    /**
     * HASH outpoint → `<destination unit>|<satoshis>|<noted at, ms>`: UTXOs taken out of this
     * shard for another (rebalancing, a split's outputs destined elsewhere) until the
     * destination has added them (wallet-move-out-4.lua, wallet-confirm-n.lua).
     */
    moving: `${base}:moving`,
    /**
     * HASH outpoint → '1': UTXOs another shard's note sent here, added once (wallet-arrive-4.lua),
     * until that note is dropped: a finisher that comes again does not add them twice.
     */
    arrived: `${base}:arrived`,
    /** STRING: the lock (token) of whoever finishes this shard's left-over notes in `moving`. */
    moveLock: `${base}:move-lock`,
    /** STRING: the splitter's lock of this shard (token), so one split of it runs at a time across workers. */
    splitLock: `${base}:split-lock`,
    /** STRING (JSON, expires after FEE_POLICY_MAX_AGE_MS): ARC's fee policy as last fetched by any process (fee-rate.ts). */
    feePolicy: `${global}:fee-policy`,
    /** STRING: highest block height whose coinbase the funding scan has imported. */
    scanHeight: `${global}:scan-height`,
  };
}

export type WalletKeys = ReturnType<typeof walletKeys>;

export interface FundingPoolOptions {
  /** The deployment's Redis key prefix (`REDIS_PREFIX`). */
  readonly prefix: string;
  /** The funding address, reported by {@link FundingPool.status}. */
  readonly address: string;
  readonly clock?: Clock;
  /** Most expired leases one `reserve` returns to free before reserving (default 100). */
  readonly sweepOnReserve?: number;
  /**
   * Number of records partitions (`REDIS_PARTITIONS`, default 1): the pool keeps one shard per
   * partition, under the partition's tag, so a record's accept script commits its funding in
   * its own slot.
   */
  readonly partitions?: number;
  /**
   * The partition counts the deployment has run with (the layout registry keeps it current): the
   * pool counts, sums and upkeeps the shards of every one of them (`partitions.units`).
   */
  readonly layouts?: PartitionLayouts;
  /** The txId → partition index (shared with the records store; one is made when absent). */
  readonly index?: PartitionIndex;
}

/** Which shard a call works on: a records partition's unit (default: the first partition's). */
export interface ShardChoice {
  readonly partition?: string;
}

export interface ReserveRequest extends ShardChoice {
  /** Lease owner: whoever may commit or release these UTXOs (one per write; default a random UUID). */
  readonly owner?: string;
  /** How many UTXOs (default 1). */
  readonly count?: number;
  /** Lease lifetime; after it the UTXOs go back to free unless committed (default 30 s). */
  readonly leaseMs?: number;
  /** Smallest UTXO that qualifies (default 1). */
  readonly minSatoshis?: number;
}

export type ReserveOutcome =
  | { readonly status: 'reserved'; readonly owner: string; readonly utxos: FundingUtxo[] }
  /** Fewer qualifying UTXOs are free than asked for; nothing was reserved. */
  | { readonly status: 'exhausted'; readonly available: number };

export interface ReserveLargestRequest extends ShardChoice {
  /** Satoshis wanted; the largest free UTXOs are taken until they sum to this. */
  readonly wanted: number;
  /** Reserve nothing unless what would be taken sums to at least this. */
  readonly least: number;
  readonly maxInputs: number;
  /** Only UTXOs worth more than this are considered (exclusive). */
  readonly above: number;
  readonly owner?: string;
  readonly leaseMs?: number;
}

export type ReserveLargestOutcome =
  | { readonly status: 'reserved'; readonly owner: string; readonly utxos: FundingUtxo[] }
  | { readonly status: 'exhausted'; readonly availableSatoshis: number };

/**
 * The owner of a commit whose inputs were taken straight from free, without a reservation
 * ({@link FundingPool.sampleFree}): the commit spends them only if they are still free, else it
 * answers `TAKEN` having changed nothing.
 */
export const FROM_FREE = '';

/** A transaction to commit against the pool. */
export interface PoolCommit extends ShardChoice {
  readonly txId: string;
  /** The lease owner that reserved `inputs`, or {@link FROM_FREE}. */
  readonly owner: string;
  /** The UTXOs the transaction spends: leased by `owner`, or free (`FROM_FREE`). */
  readonly inputs: readonly FundingUtxo[];
  /** Its outputs to the funding key (a record's change; a split's outputs and change). */
  readonly outputs: readonly FundingUtxo[];
  /** What the transaction is, for status listings (default 'record'). */
  readonly kind?: string;
  /** Raw hex to keep for re-broadcast; omit when the caller stores the transaction itself. */
  readonly rawHex?: string;
  /**
   * Standalone commits only: the shard (records partition unit) each of `outputs` goes to when
   * the transaction is confirmed, in order (absent, or this shard's own unit: it stays here). A
   * split's outputs go straight to the shards that need them, with no later move.
   */
  readonly destinations?: readonly (string | undefined)[];
}

/** `EXISTS`: already committed; `LEASE_LOST`: an input's lease expired (MUST NOT broadcast). */
export type CommitOutcome = 'OK' | 'EXISTS' | 'LEASE_LOST' | 'TAKEN';

export interface PoolCounters {
  readonly count: number;
  readonly satoshis: number;
}

export interface PoolStatus {
  readonly address: string;
  /** free + leased + pending: everything the wallet owns, unconfirmed change included. */
  readonly balance: number;
  readonly free: PoolCounters;
  readonly leased: PoolCounters;
  /** Change and split outputs whose transaction ARC has not accepted yet. */
  readonly pending: PoolCounters;
  /** Inputs spent by transactions ARC has not accepted (or rejected) yet. */
  readonly spentUnconfirmed: PoolCounters;
  /** Committed transactions not yet settled by confirm/fail. */
  readonly unsettledTransactions: number;
}

export interface UnsettledTx {
  readonly txId: string;
  readonly kind: string;
  readonly committedAt: Date;
  readonly inputs: string[];
  readonly outputs: string[];
  readonly rawHex: string | null;
}

interface Commands {
  walletAdd(free: string, sats: string, counters: string, ...argv: string[]): Promise<number>;
  walletReserve(...args: string[]): Promise<string[]>;
  walletReserveLargest(...args: string[]): Promise<string[]>;
  walletRelease(...args: string[]): Promise<number>;
  walletSweep(...args: string[]): Promise<number>;
  walletCommit(...args: string[]): Promise<string>;
  walletSample(free: string, min: string, max: string, count: string, fraction: string): Promise<string[]>;
  /** `wallet-confirm-n.lua`: the number of keys first. */
  walletConfirm(numKeys: number, ...keysThenArgv: string[]): Promise<(number | string)[]>;
  walletFail(...args: string[]): Promise<number>;
  walletUnlock(key: string, token: string): Promise<number>;
  walletMoveOut(...args: string[]): Promise<string[]>;
  walletArrive(free: string, sats: string, counters: string, arrived: string, ...argv: string[]): Promise<number>;
  walletAdvanceCursor(key: string, height: string): Promise<number>;
}

const DEFAULT_LEASE_MS = 30_000;
/** How long one finisher of a shard's notes in `moving` holds that shard's move lock (at most). */
const MOVE_LOCK_MS = 30_000;
/** How often, and how long apart, a finisher asks again for a move lock another finisher holds. */
const MOVE_LOCK_TRIES = 40;
const MOVE_LOCK_WAIT_MS = 25;
/** Most transactions one `wallet-confirm-n.lua` call settles (its ZMSCORE unpacks them all on Lua's stack). */
const CONFIRM_BATCH = 500;
const COUNTER_FIELDS = [
  'freeCount',
  'freeSats',
  'leasedCount',
  'leasedSats',
  'pendingCount',
  'pendingSats',
  'spentCount',
  'spentSats',
] as const;

/** Directory of the pool's Lua scripts (the records lib reads `wallet-commit-9.lua`'s contract from here). */
export const WALLET_LUA_DIR = path.join(__dirname, 'lua');

/**
 * The funding wallet's UTXO pool in Redis. Every state change is ONE Lua script, so the pool is
 * safe across any number of processes: a UTXO is in exactly one of free, leased, pending or
 * spent, and a counter moves with it in the same step.
 *
 *     add ──► free ──reserve──► leased ──commit──► spent (by txId) ──confirm──► (gone)
 *              │▲  ◄──release / lease expiry──┘      ▲               └─fail(release)──► free
 *              │└──────────commit (FROM_FREE)─────────┘
 *              └──────confirm── pending (outputs of an unsettled tx) ──fail──► (gone)
 *
 * Sharded by records partition (`partitions`): every state change runs in one shard, the one
 * of the record or split it funds, so a record's accept commits its funding in its own slot; a
 * transaction's change returns to its shard. Deposits go to the emptiest shards; status,
 * counts and unsettled listings sum or merge the shards; confirm and fail find a transaction's
 * shard through the txId index (which a writer fills before it commits). With one partition
 * there is one shard, under `rec`, and no index.
 *
 * Connections are injected; the pool never opens one.
 */
export class FundingPool {
  /** The keys of the first shard (the only one with one partition). */
  readonly keys: WalletKeys;
  /** The records partitions whose shards this pool keeps. */
  readonly partitions: Partitions;
  /** The txId → partition index: which shard settles a transaction. */
  readonly index: PartitionIndex;
  private readonly shardKeys = new Map<string, WalletKeys>();
  private readonly cmd: Commands;
  private readonly clock: Clock;
  private readonly sweepOnReserve: number;
  private readonly address: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: FundingPoolOptions,
  ) {
    this.partitions = new Partitions(options.prefix, options.partitions ?? 1, 0, options.layouts);
    this.index = options.index ?? new PartitionIndex(redis, options.prefix);
    this.keys = this.keysOf(this.partitions.unit(0));
    this.clock = options.clock ?? systemClock;
    this.sweepOnReserve = options.sweepOnReserve ?? 100;
    this.address = options.address;
    loadLuaCommands(redis, WALLET_LUA_DIR, { prelude: walletPrelude() });
    this.cmd = redis as unknown as Commands;
  }

  /** The keys of the shard of partition `unit` (default: the first partition's). */
  keysOf(unit: string = this.partitions.unit(0)): WalletKeys {
    let keys = this.shardKeys.get(unit);
    if (!keys) {
      keys = walletKeys(this.options.prefix, unit);
      this.shardKeys.set(unit, keys);
    }
    return keys;
  }

  /**
   * Adds UTXOs paying the funding key as free, each to the shard with the fewest free satoshis
   * at the time (deposits, coinbases, tests' funding). Outpoints the pool already tracks in any
   * state, in any shard, are skipped. @returns how many were added. @throws TypeError on a
   * malformed UTXO.
   */
  async add(utxos: readonly FundingUtxo[], shard?: ShardChoice): Promise<number> {
    if (utxos.length === 0) return 0;
    utxos.forEach(assertUtxo);
    if (this.partitions.single || shard?.partition !== undefined) {
      const k = this.keysOf(shard?.partition);
      return Number(
        await this.cmd.walletAdd(
          k.free,
          k.sats,
          k.counters,
          ...utxos.flatMap((u) => [toOutpoint(u), String(u.satoshis)]),
        ),
      );
    }
    const units = this.partitions.units;
    const outpoints = utxos.map(toOutpoint);
    const [tracked, free] = await Promise.all([
      Promise.all(units.map((u) => this.redis.hmget(this.keysOf(u).sats, ...outpoints))),
      this.freeSatoshisByShard(),
    ]);
    const fresh = utxos.filter((_, i) => tracked.every((shard) => shard[i] === null));
    const batches = new Map<string, FundingUtxo[]>();
    const level = [...free];
    for (const u of [...fresh].sort((a, b) => b.satoshis - a.satoshis)) {
      let emptiest = 0;
      for (let i = 1; i < level.length; i++) if ((level[i] ?? 0) < (level[emptiest] ?? 0)) emptiest = i;
      level[emptiest] = (level[emptiest] ?? 0) + u.satoshis;
      const unit = units[emptiest] as string;
      const batch = batches.get(unit);
      if (batch) batch.push(u);
      else batches.set(unit, [u]);
    }
    const added = await Promise.all([...batches].map(([unit, batch]) => this.add(batch, { partition: unit })));
    return added.reduce((a, b) => a + b, 0);
  }

  /** Every free UTXO of every shard, as `txId:vout` → satoshis (one ZRANGE per shard: listings, tests). */
  async freeOutpoints(): Promise<Map<string, number>> {
    const shards = await Promise.all(
      this.partitions.units.map((u) => this.redis.zrange(this.keysOf(u).free, 0, -1, 'WITHSCORES')),
    );
    const out = new Map<string, number>();
    for (const flat of shards)
      for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i] as string, Number(flat[i + 1]));
    return out;
  }

  /** Free satoshis of each shard, in partition order (one HGET per shard). */
  async freeSatoshisByShard(): Promise<number[]> {
    const values = await Promise.all(
      this.partitions.units.map((u) => this.redis.hget(this.keysOf(u).counters, 'freeSats')),
    );
    return values.map((v) => Number(v ?? 0));
  }

  /** Free UTXOs and satoshis of each shard, in partition order (one HMGET per shard). */
  async freeByShard(): Promise<PoolCounters[]> {
    const values = await Promise.all(
      this.partitions.units.map((u) => this.redis.hmget(this.keysOf(u).counters, 'freeCount', 'freeSats')),
    );
    return values.map(([count, satoshis]) => ({ count: Number(count ?? 0), satoshis: Number(satoshis ?? 0) }));
  }

  /**
   * Reserves `count` free UTXOs (the smallest worth at least `minSatoshis`) of one shard for one
   * writer, or answers `exhausted` having reserved nothing. Two callers never get the same UTXO.
   */
  async reserve(request: ReserveRequest = {}): Promise<ReserveOutcome> {
    const count = request.count ?? 1;
    if (!Number.isSafeInteger(count) || count < 1) throw new RangeError('count must be a positive integer');
    const owner = request.owner ?? randomUUID();
    const now = this.clock.now().getTime();
    const k = this.keysOf(request.partition);
    const out = await this.cmd.walletReserve(
      k.free,
      k.leases,
      k.owners,
      k.sats,
      k.counters,
      String(count),
      owner,
      String(now),
      String(now + (request.leaseMs ?? DEFAULT_LEASE_MS)),
      String(request.minSatoshis ?? 1),
      String(this.sweepOnReserve),
    );
    if (out[0] === 'EXHAUSTED') return { status: 'exhausted', available: Number(out[1]) };
    return { status: 'reserved', owner, utxos: pairs(out.slice(1)) };
  }

  /**
   * Up to `count` free UTXOs of one shard worth at least `minSatoshis` (and less than
   * `belowSatoshis`, when given), from a random window of its free set, reserving nothing: for a
   * writer that commits them with {@link FROM_FREE}. Read-only; another writer may take any of
   * them first (the commit then answers `TAKEN`). One round trip.
   */
  async sampleFree(
    request: {
      readonly count: number;
      readonly minSatoshis: number;
      readonly belowSatoshis?: number;
    } & ShardChoice,
  ): Promise<FundingUtxo[]> {
    const out = await this.cmd.walletSample(
      this.keysOf(request.partition).free,
      String(request.minSatoshis),
      request.belowSatoshis === undefined ? '+inf' : String(request.belowSatoshis),
      String(request.count),
      String(Math.random()),
    );
    return pairs(out);
  }

  /** Reserves the largest free UTXOs of one shard (the splitter's inputs); see `wallet-reserve-largest-5.lua`. */
  async reserveLargest(request: ReserveLargestRequest): Promise<ReserveLargestOutcome> {
    const owner = request.owner ?? randomUUID();
    const now = this.clock.now().getTime();
    const k = this.keysOf(request.partition);
    const out = await this.cmd.walletReserveLargest(
      k.free,
      k.leases,
      k.owners,
      k.sats,
      k.counters,
      String(request.wanted),
      String(request.least),
      String(request.maxInputs),
      String(request.above),
      owner,
      String(now + (request.leaseMs ?? DEFAULT_LEASE_MS)),
    );
    if (out[0] === 'EXHAUSTED') return { status: 'exhausted', availableSatoshis: Number(out[1]) };
    return { status: 'reserved', owner, utxos: pairs(out.slice(1)) };
  }

  /**
   * Returns `owner`'s leased UTXOs of one shard to free. Only for a write that stored nothing and
   * broadcast nothing. @returns how many were released (leases held by someone else are left alone).
   */
  async release(owner: string, utxos: readonly FundingUtxo[], shard?: ShardChoice): Promise<number> {
    if (utxos.length === 0) return 0;
    const k = this.keysOf(shard?.partition);
    return Number(
      await this.cmd.walletRelease(k.free, k.leases, k.owners, k.sats, k.counters, owner, ...utxos.map(toOutpoint)),
    );
  }

  /**
   * Returns expired leases to free in every shard, up to `limit` each (run it on a schedule;
   * `reserve` also sweeps its shard). @returns how many.
   */
  async sweep(limit = 1000): Promise<number> {
    const now = String(this.clock.now().getTime());
    const swept = await Promise.all(
      this.partitions.units.map((unit) => {
        const k = this.keysOf(unit);
        return this.cmd.walletSweep(k.free, k.leases, k.owners, k.sats, k.counters, now, String(limit));
      }),
    );
    return swept.reduce((a, n) => a + Number(n), 0);
  }

  /**
   * The 9 KEYS of the commit contract in the shard of partition `unit`, in order, for a records
   * accept script that embeds it (see README). `wallet-commit-9.lua` documents each.
   */
  commitKeys(txId: string, unit?: string): string[] {
    const k = this.keysOf(unit);
    return [k.leases, k.owners, k.sats, k.spent, k.pending, k.counters, k.txs, k.tx(txId), k.free];
  }

  /** The 7 ARGV of the commit contract, in order (see `wallet-commit-9.lua`). */
  commitArgs(commit: PoolCommit): string[] {
    commit.inputs.forEach(assertUtxo);
    commit.outputs.forEach(assertUtxo);
    if (commit.inputs.length === 0) throw new RangeError('a commit spends at least one pool UTXO');
    return [
      commit.txId,
      commit.owner,
      String(this.clock.now().getTime()),
      inputsArg(commit.inputs),
      outputsArg(commit.outputs),
      commit.kind ?? 'record',
      commit.rawHex ?? '',
    ];
  }

  /**
   * Standalone commit in one shard: leased (or, with `FROM_FREE`, free) inputs → spent by `txId`,
   * outputs → pending. MUST run before the transaction is broadcast, and a `LEASE_LOST` or `TAKEN`
   * answer MUST stop the broadcast. With several partitions the txId's index entry is stored
   * first, so that confirm and fail find the shard.
   */
  async commit(commit: PoolCommit): Promise<CommitOutcome> {
    const unit = commit.partition ?? this.partitions.unit(0);
    if (!this.partitions.single) await this.index.store(commit.txId, unit);
    const to = commit.destinations?.map((d) => (d === undefined || d === unit ? '-' : d)) ?? [];
    if (to.length > commit.outputs.length) throw new RangeError('more destinations than outputs');
    return (await this.cmd.walletCommit(
      ...this.commitKeys(commit.txId, unit),
      ...this.commitArgs(commit),
      to.some((d) => d !== '-') ? to.join(',') : '',
    )) as CommitOutcome;
  }

  /**
   * ARC accepted `txId` (SEEN_ON_NETWORK or MINED): its pending outputs become free in its shard
   * (change returns to its partition), or in the shard its commit destined each for (a split's),
   * and its inputs are forgotten. @returns outputs made free,
   * or null if the pool knows no such unsettled tx.
   */
  async confirm(txId: string): Promise<number | null> {
    return (await this.confirmMany([txId]))[0] ?? null;
  }

  /**
   * {@link confirm} for many transactions (a callback batch, a confirmation pass), in one script
   * call per shard (of at most 500 transactions; the shards found through the index in one
   * lookup): a transaction already settled, or unknown to the pool, costs no command of its own
   * (`wallet-confirm-n.lua`). @returns per txId, in order, outputs made free or null.
   */
  async confirmMany(txIds: readonly string[]): Promise<(number | null)[]> {
    if (txIds.length === 0) return [];
    const out = new Array<number | null>(txIds.length).fill(null);
    const units = this.partitions.single ? txIds.map(() => this.partitions.unit(0)) : await this.index.lookup(txIds);
    const byShard = new Map<string, number[]>();
    units.forEach((unit, i) => {
      if (unit === null) return;
      const group = byShard.get(unit);
      if (group) group.push(i);
      else byShard.set(unit, [i]);
    });
    const calls = [...byShard].flatMap(([unit, group]) => chunks(group, CONFIRM_BATCH).map((c) => [unit, c] as const));
    await Promise.all(
      calls.map(async ([unit, positions]) => {
        const ids = positions.map((i) => txIds[i] as string);
        const k = this.keysOf(unit);
        // The shard's keys, then one tx hash per txId.
        const keys = [
          ...this.settleKeys(ids[0] as string, unit).slice(0, 6),
          k.moving,
          ...ids.map((txId) => k.tx(txId)),
        ];
        const now = String(this.clock.now().getTime());
        const freed = await this.cmd.walletConfirm(keys.length, ...keys, now, ...ids);
        positions.forEach((p, j) => {
          const n = Number(freed[j]);
          out[p] = n < 0 ? null : n;
        });
        // Outputs destined for other shards left with a note: add them there now (a confirmer
        // that dies first leaves the notes to a later upkeep's finishMoves).
        const noted = freed.slice(ids.length).filter((_, i) => i % 2 === 0);
        if (noted.length > 0) await this.finishMovesOf(unit, noted.map(String));
      }),
    );
    return out;
  }

  /**
   * ARC definitively rejected `txId`: pending outputs are dropped; inputs return to free only
   * when `releaseInputs` (decide it with {@link inputsReleasable}). Never call it for an
   * ambiguous outcome. @returns inputs made free, or null if the pool knows no such unsettled tx.
   */
  async fail(txId: string, options: { readonly releaseInputs: boolean }): Promise<number | null> {
    const unit = await this.shardOf(txId);
    if (unit === null) return null;
    const n = Number(
      await this.cmd.walletFail(...this.settleKeys(txId, unit), txId, options.releaseInputs ? '1' : '0'),
    );
    return n < 0 ? null : n;
  }

  /** Balance and counts summed over the shards (one HMGET and one ZCARD per shard). */
  async status(): Promise<PoolStatus> {
    const shards = await Promise.all(
      this.partitions.units.map(async (unit) => {
        const k = this.keysOf(unit);
        const [values, unsettled] = await Promise.all([
          this.redis.hmget(k.counters, ...COUNTER_FIELDS),
          this.redis.zcard(k.txs),
        ]);
        return { values, unsettled };
      }),
    );
    const n = (i: number) => shards.reduce((sum, s) => sum + Number(s.values[i] ?? 0), 0);
    const free = { count: n(0), satoshis: n(1) };
    const leased = { count: n(2), satoshis: n(3) };
    const pending = { count: n(4), satoshis: n(5) };
    return {
      address: this.address,
      balance: free.satoshis + leased.satoshis + pending.satoshis,
      free,
      leased,
      pending,
      spentUnconfirmed: { count: n(6), satoshis: n(7) },
      unsettledTransactions: shards.reduce((sum, s) => sum + s.unsettled, 0),
    };
  }

  /**
   * Free UTXOs of the denomination: worth at least `satoshisEach` and less than twice it, in one
   * shard or (no partition given) in all. Larger ones are the splitter's reservoir and do not
   * count towards the low-water mark.
   */
  async denominatedCount(satoshisEach: number, shard?: ShardChoice): Promise<number> {
    const units = shard?.partition === undefined ? this.partitions.units : [shard.partition];
    const counts = await Promise.all(
      units.map((unit) => this.redis.zcount(this.keysOf(unit).free, satoshisEach, `(${2 * satoshisEach}`)),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  /**
   * The oldest unsettled transactions (committed, neither confirmed nor failed), oldest first,
   * of one shard or (no partition given) of all.
   */
  async unsettled(limit = 100, shard?: ShardChoice): Promise<UnsettledTx[]> {
    const units = shard?.partition === undefined ? this.partitions.units : [shard.partition];
    const perShard = await Promise.all(
      units.map(async (unit) => {
        const flat = await this.redis.zrange(this.keysOf(unit).txs, 0, limit - 1, 'WITHSCORES');
        const ids: { txId: string; at: number; unit: string }[] = [];
        for (let i = 0; i < flat.length; i += 2) ids.push({ txId: flat[i] as string, at: Number(flat[i + 1]), unit });
        return ids;
      }),
    );
    const ids = perShard
      .flat()
      .sort((a, b) => a.at - b.at)
      .slice(0, limit);
    if (ids.length === 0) return [];
    const details = await Promise.all(
      ids.map(({ txId, unit }) => this.redis.hmget(this.keysOf(unit).tx(txId), 'kind', 'inputs', 'outputs', 'rawHex')),
    );
    return ids.map(({ txId, at }, i) => {
      const [kind, inputs, outputs, rawHex] = details[i] ?? [];
      const split = (s: string | null | undefined) => (s ? s.split(',') : []);
      return {
        txId,
        kind: kind ?? 'record',
        committedAt: new Date(at),
        inputs: split(inputs),
        outputs: split(outputs),
        rawHex: rawHex ?? null,
      };
    });
  }

  /** Takes one shard's splitter lock for `ms` (SET NX PX). @returns its token, or null when another holder has it. */
  async acquireSplitLock(ms: number, shard?: ShardChoice): Promise<string | null> {
    const token = randomUUID();
    return (await this.redis.set(this.keysOf(shard?.partition).splitLock, token, 'PX', ms, 'NX')) === 'OK'
      ? token
      : null;
  }

  /** Releases one shard's splitter lock if `token` still holds it. */
  async releaseSplitLock(token: string, shard?: ShardChoice): Promise<void> {
    await this.cmd.walletUnlock(this.keysOf(shard?.partition).splitLock, token);
  }

  /**
   * Moves up to `count` free UTXOs worth [`minSatoshis`, `belowSatoshis`) from shard `from` to
   * shard `to` (rebalancing; wallet-move-out-4.lua): out of `from` with a note, into `to`, then
   * the note dropped. @returns how many moved.
   */
  async moveFree(
    from: string,
    to: string,
    request: { readonly count: number; readonly minSatoshis: number; readonly belowSatoshis?: number },
  ): Promise<number> {
    const k = this.keysOf(from);
    const out = await this.cmd.walletMoveOut(
      k.free,
      k.sats,
      k.counters,
      k.moving,
      to,
      String(request.minSatoshis),
      request.belowSatoshis === undefined ? '+inf' : String(request.belowSatoshis),
      String(request.count),
      String(this.clock.now().getTime()),
    );
    const utxos = pairs(out);
    if (utxos.length === 0) return 0;
    await this.finishMovesOf(from, utxos.map(toOutpoint));
    return utxos.length;
  }

  /**
   * Finishes the moves a mover or a confirmer left half done (its notes in `moving`), in every
   * shard. @returns how many UTXOs it added.
   */
  async finishMoves(): Promise<number> {
    const added = await Promise.all(this.partitions.units.map((unit) => this.finishMovesOf(unit)));
    return added.reduce((a, b) => a + b, 0);
  }

  /**
   * Adds the UTXOs noted in shard `unit`'s `moving` (all, or those of `outpoints` still noted)
   * to their destinations, then drops the notes, then the destinations' arrival markers. One
   * finisher per shard at a time (its move lock, asked for again for about a second; 0 if it
   * stays taken: the notes wait for the next upkeep), and it reads the notes under the lock, so
   * two finishers never add one note's UTXO; a destination adds a UTXO once
   * (wallet-arrive-4.lua), so the finisher after one killed between adding and dropping the note
   * adds nothing. @returns how many UTXOs it added.
   */
  async finishMovesOf(unit: string, outpoints?: readonly string[]): Promise<number> {
    const k = this.keysOf(unit);
    const token = randomUUID();
    for (let tries = 1; (await this.redis.set(k.moveLock, token, 'PX', MOVE_LOCK_MS, 'NX')) !== 'OK'; tries++) {
      if (tries >= MOVE_LOCK_TRIES) return 0;
      await new Promise((resolve) => setTimeout(resolve, MOVE_LOCK_WAIT_MS));
    }
    try {
      let notes: [string, string][];
      if (outpoints === undefined) notes = Object.entries(await this.redis.hgetall(k.moving));
      else {
        const values = outpoints.length === 0 ? [] : await this.redis.hmget(k.moving, ...outpoints);
        notes = outpoints.flatMap((op, i) => (values[i] ? [[op, values[i]] as [string, string]] : []));
      }
      if (notes.length === 0) return 0;
      const byDestination = new Map<string, FundingUtxo[]>();
      for (const [op, note] of notes) {
        const [to, sats] = note.split('|') as [string, string];
        const batch = byDestination.get(to);
        if (batch) batch.push(fromOutpoint(op, sats));
        else byDestination.set(to, [fromOutpoint(op, sats)]);
      }
      const destinations = [...byDestination];
      const added = await Promise.all(
        destinations.map(([to, utxos]) => {
          const d = this.keysOf(to);
          const argv = utxos.flatMap((u) => [toOutpoint(u), String(u.satoshis)]);
          return this.cmd.walletArrive(d.free, d.sats, d.counters, d.arrived, ...argv);
        }),
      );
      await this.redis.hdel(k.moving, ...notes.map(([op]) => op));
      await Promise.all(
        destinations.map(([to, utxos]) => this.redis.hdel(this.keysOf(to).arrived, ...utxos.map(toOutpoint))),
      );
      return added.reduce((a, n) => a + Number(n), 0);
    } finally {
      await this.cmd.walletUnlock(k.moveLock, token);
    }
  }

  /** Highest block height whose coinbase the funding scan imported (-1 before any). */
  async scanHeight(): Promise<number> {
    return Number((await this.redis.get(this.keys.scanHeight)) ?? -1);
  }

  /** Moves the scan cursor forward to `height` (never back). */
  async advanceScanHeight(height: number): Promise<void> {
    await this.cmd.walletAdvanceCursor(this.keys.scanHeight, String(height));
  }

  /** The shard holding `txId`'s unsettled transaction: its partition by the index (null: unknown). */
  private async shardOf(txId: string): Promise<string | null> {
    if (this.partitions.single) return this.partitions.unit(0);
    return this.index.lookupOne(txId);
  }

  private settleKeys(txId: string, unit: string): string[] {
    const k = this.keysOf(unit);
    return [k.free, k.sats, k.spent, k.pending, k.counters, k.txs, k.tx(txId)];
  }
}

let prelude: string | undefined;

/** `wallet-prelude.lua`: the state moves the wallet scripts share, put in front of each. */
function walletPrelude(): string {
  prelude ??= fs.readFileSync(path.join(WALLET_LUA_DIR, 'wallet-prelude.lua'), 'utf8');
  return prelude;
}

/** `positions` cut into runs of at most `size`, in order. */
function chunks(positions: readonly number[], size: number): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < positions.length; i += size) out.push(positions.slice(i, i + size));
  return out;
}

function pairs(flat: readonly string[]): FundingUtxo[] {
  const out: FundingUtxo[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push(fromOutpoint(flat[i] as string, flat[i + 1] as string));
  return out;
}

// Outpoints: how the pool names a UTXO in its structures and its scripts' arguments.

const TX_ID = /^[0-9a-f]{64}$/;

/** `txId:vout`, the member name of an outpoint in every pool structure. */
export function toOutpoint(utxo: { readonly txId: string; readonly vout: number }): string {
  return `${utxo.txId}:${utxo.vout}`;
}

/** Checks a UTXO's fields; throws on a malformed one (a programming error or bad operator input). */
export function assertUtxo(utxo: FundingUtxo): void {
  if (!TX_ID.test(utxo.txId))
    throw new TypeError(`bad txId ${JSON.stringify(utxo.txId)} (64 lowercase hex characters)`);
  if (!Number.isSafeInteger(utxo.vout) || utxo.vout < 0 || utxo.vout > 0xffffffff)
    throw new TypeError(`bad vout ${utxo.vout}`);
  if (!Number.isSafeInteger(utxo.satoshis) || utxo.satoshis < 1) throw new TypeError(`bad satoshis ${utxo.satoshis}`);
}

/** Parses `outpoint` + satoshis as the scripts return them. */
export function fromOutpoint(outpoint: string, satoshis: string | number): FundingUtxo {
  const i = outpoint.lastIndexOf(':');
  return { txId: outpoint.slice(0, i), vout: Number(outpoint.slice(i + 1)), satoshis: Number(satoshis) };
}

/**
 * Parses the operator's `TXID:VOUT:SATS` (the CLI's `wallet import`).
 * @throws TypeError naming what is wrong.
 */
export function parseUtxoSpec(spec: string): FundingUtxo {
  const m = /^([0-9a-fA-F]{64}):(\d{1,10}):(\d{1,16})$/.exec(spec.trim());
  if (!m) throw new TypeError(`"${spec}" is not TXID:VOUT:SATS (64 hex characters, output index, satoshis)`);
  const utxo = { txId: (m[1] as string).toLowerCase(), vout: Number(m[2]), satoshis: Number(m[3]) };
  assertUtxo(utxo);
  return utxo;
}

/** Pool ARGV form of inputs: outpoints joined by ','. */
export const inputsArg = (utxos: readonly FundingUtxo[]): string => utxos.map(toOutpoint).join(',');

/** Pool ARGV form of outputs: `outpoint=satoshis` joined by ','. */
export const outputsArg = (utxos: readonly FundingUtxo[]): string =>
  utxos.map((u) => `${toOutpoint(u)}=${u.satoshis}`).join(',');
