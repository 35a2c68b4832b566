import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { RedisClient } from '@proofline/shared-redis';
import { systemClock } from '@proofline/shared-config';
import type { Clock } from '@proofline/shared-config';
import { groupBySlot, loadLuaCommands } from '@proofline/shared-redis';
import { walletKeys } from './keys';
import type { WalletKeys } from './keys';
import { assertUtxo, fromOutpoint, inputsArg, outputsArg, toOutpoint } from './outpoint';
import type { FundingUtxo } from './ports';

export interface FundingPoolOptions {
  /** The deployment's Redis key prefix (`REDIS_PREFIX`). */
  readonly prefix: string;
  /** The funding address, reported by {@link FundingPool.status}. */
  readonly address: string;
  readonly clock?: Clock;
  /** Most expired leases one `reserve` returns to free before reserving (default 100). */
  readonly sweepOnReserve?: number;
}

export interface ReserveRequest {
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

export interface ReserveLargestRequest {
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
export interface PoolCommit {
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
  walletConfirm(numKeys: number, ...keysThenArgv: string[]): Promise<number[]>;
  walletFail(...args: string[]): Promise<number>;
  walletUnlock(key: string, token: string): Promise<number>;
  walletAdvanceCursor(key: string, height: string): Promise<number>;
}

const DEFAULT_LEASE_MS = 30_000;
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
 * Connections are injected; the pool never opens one.
 */
export class FundingPool {
  readonly keys: WalletKeys;
  private readonly cmd: Commands;
  private readonly clock: Clock;
  private readonly sweepOnReserve: number;
  private readonly address: string;

  constructor(
    private readonly redis: RedisClient,
    options: FundingPoolOptions,
  ) {
    this.keys = walletKeys(options.prefix);
    this.clock = options.clock ?? systemClock;
    this.sweepOnReserve = options.sweepOnReserve ?? 100;
    this.address = options.address;
    loadLuaCommands(redis, WALLET_LUA_DIR);
    this.cmd = redis as unknown as Commands;
  }

  /**
   * Adds UTXOs paying the funding key as free. Outpoints the pool already tracks in any state
   * are skipped. @returns how many were added. @throws TypeError on a malformed UTXO.
   */
  async add(utxos: readonly FundingUtxo[]): Promise<number> {
    if (utxos.length === 0) return 0;
    utxos.forEach(assertUtxo);
    const k = this.keys;
    return Number(
      await this.cmd.walletAdd(
        k.free,
        k.sats,
        k.counters,
        ...utxos.flatMap((u) => [toOutpoint(u), String(u.satoshis)]),
      ),
    );
  }

  /**
   * Reserves `count` free UTXOs (the smallest worth at least `minSatoshis`) for one writer, or
   * answers `exhausted` having reserved nothing. Two callers never get the same UTXO.
   */
  async reserve(request: ReserveRequest = {}): Promise<ReserveOutcome> {
    const count = request.count ?? 1;
    if (!Number.isSafeInteger(count) || count < 1) throw new RangeError('count must be a positive integer');
    const owner = request.owner ?? randomUUID();
    const now = this.clock.now().getTime();
    const k = this.keys;
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
   * Up to `count` free UTXOs worth at least `minSatoshis` (and less than `belowSatoshis`, when
   * given), from a random window of the free set, reserving nothing: for a writer that commits
   * them with {@link FROM_FREE}. Read-only; another writer may take any of them first (the
   * commit then answers `TAKEN`). One round trip.
   */
  async sampleFree(request: {
    readonly count: number;
    readonly minSatoshis: number;
    readonly belowSatoshis?: number;
  }): Promise<FundingUtxo[]> {
    const out = await this.cmd.walletSample(
      this.keys.free,
      String(request.minSatoshis),
      request.belowSatoshis === undefined ? '+inf' : String(request.belowSatoshis),
      String(request.count),
      String(Math.random()),
    );
    return pairs(out);
  }

  /** Reserves the largest free UTXOs (the splitter's inputs); see `wallet-reserve-largest-5.lua`. */
  async reserveLargest(request: ReserveLargestRequest): Promise<ReserveLargestOutcome> {
    const owner = request.owner ?? randomUUID();
    const now = this.clock.now().getTime();
    const k = this.keys;
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
   * Returns `owner`'s leased UTXOs to free. Only for a write that stored nothing and broadcast
   * nothing. @returns how many were released (leases held by someone else are left alone).
   */
  async release(owner: string, utxos: readonly FundingUtxo[]): Promise<number> {
    if (utxos.length === 0) return 0;
    const k = this.keys;
    return Number(
      await this.cmd.walletRelease(k.free, k.leases, k.owners, k.sats, k.counters, owner, ...utxos.map(toOutpoint)),
    );
  }

  /** Returns expired leases to free (run it on a schedule; `reserve` also sweeps). @returns how many. */
  async sweep(limit = 1000): Promise<number> {
    const k = this.keys;
    return Number(
      await this.cmd.walletSweep(
        k.free,
        k.leases,
        k.owners,
        k.sats,
        k.counters,
        String(this.clock.now().getTime()),
        String(limit),
      ),
    );
  }

  /**
   * The 9 KEYS of the commit contract, in order, for a records accept script that embeds it
   * (see README). `wallet-commit-9.lua` documents each.
   */
  commitKeys(txId: string): string[] {
    const k = this.keys;
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
   * Standalone commit: leased (or, with `FROM_FREE`, free) inputs → spent by `txId`, outputs →
   * pending. MUST run before the transaction is broadcast, and a `LEASE_LOST` or `TAKEN` answer
   * MUST stop the broadcast.
   */
  async commit(commit: PoolCommit): Promise<CommitOutcome> {
    return (await this.cmd.walletCommit(...this.commitKeys(commit.txId), ...this.commitArgs(commit))) as CommitOutcome;
  }

  /**
   * ARC accepted `txId` (SEEN_ON_NETWORK or MINED): its pending outputs become free and its
   * inputs are forgotten. @returns outputs made free, or null if the pool knows no such unsettled tx.
   */
  async confirm(txId: string): Promise<number | null> {
    return (await this.confirmMany([txId]))[0] ?? null;
  }

  /**
   * {@link confirm} for many transactions (a callback batch, a confirmation pass), in one script
   * call per slot group (of at most 500 transactions): a transaction already settled, or unknown
   * to the pool, costs no command of its own (`wallet-confirm-n.lua`). @returns per txId, in order,
   * outputs made free or null.
   */
  async confirmMany(txIds: readonly string[]): Promise<(number | null)[]> {
    if (txIds.length === 0) return [];
    const out = new Array<number | null>(txIds.length).fill(null);
    const groups = groupBySlot(txIds.map((txId) => this.keys.tx(txId)));
    const calls = groups.flatMap((group) => chunks(group, CONFIRM_BATCH));
    await Promise.all(
      calls.map(async (positions) => {
        const ids = positions.map((i) => txIds[i] as string);
        // The pool's keys of the group's slot (its first transaction's), then one tx hash per txId.
        const keys = [...this.settleKeys(ids[0] as string).slice(0, 6), ...ids.map((txId) => this.keys.tx(txId))];
        const freed = await this.cmd.walletConfirm(keys.length, ...keys, ...ids);
        positions.forEach((p, j) => {
          const n = Number(freed[j]);
          out[p] = n < 0 ? null : n;
        });
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
    const n = Number(await this.cmd.walletFail(...this.settleKeys(txId), txId, options.releaseInputs ? '1' : '0'));
    return n < 0 ? null : n;
  }

  /** Balance and counts, in one round trip. */
  async status(): Promise<PoolStatus> {
    const [values, unsettled] = await Promise.all([
      this.redis.hmget(this.keys.counters, ...COUNTER_FIELDS),
      this.redis.zcard(this.keys.txs),
    ]);
    const n = (i: number) => Number(values[i] ?? 0);
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
      unsettledTransactions: unsettled,
    };
  }

  /**
   * Free UTXOs of the denomination: worth at least `satoshisEach` and less than twice it. Larger
   * ones are the splitter's reservoir and do not count towards the low-water mark.
   */
  async denominatedCount(satoshisEach: number): Promise<number> {
    return this.redis.zcount(this.keys.free, satoshisEach, `(${2 * satoshisEach}`);
  }

  /** The oldest unsettled transactions (committed, neither confirmed nor failed), oldest first. */
  async unsettled(limit = 100): Promise<UnsettledTx[]> {
    const flat = await this.redis.zrange(this.keys.txs, 0, limit - 1, 'WITHSCORES');
    const ids: { txId: string; at: number }[] = [];
    for (let i = 0; i < flat.length; i += 2) ids.push({ txId: flat[i] as string, at: Number(flat[i + 1]) });
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const { txId } of ids) pipeline.hmget(this.keys.tx(txId), 'kind', 'inputs', 'outputs', 'rawHex');
    const replies = (await pipeline.exec()) ?? [];
    return ids.map(({ txId, at }, i) => {
      const [err, value] = replies[i] ?? [null, []];
      if (err) throw err;
      const [kind, inputs, outputs, rawHex] = value as (string | null)[];
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

  /** Takes the splitter's lock for `ms` (SET NX PX). @returns its token, or null when another holder has it. */
  async acquireSplitLock(ms: number): Promise<string | null> {
    const token = randomUUID();
    return (await this.redis.set(this.keys.splitLock, token, 'PX', ms, 'NX')) === 'OK' ? token : null;
  }

  /** Releases the splitter's lock if `token` still holds it. */
  async releaseSplitLock(token: string): Promise<void> {
    await this.cmd.walletUnlock(this.keys.splitLock, token);
  }

  /** Highest block height whose coinbase the funding scan imported (-1 before any). */
  async scanHeight(): Promise<number> {
    return Number((await this.redis.get(this.keys.scanHeight)) ?? -1);
  }

  /** Moves the scan cursor forward to `height` (never back). */
  async advanceScanHeight(height: number): Promise<void> {
    await this.cmd.walletAdvanceCursor(this.keys.scanHeight, String(height));
  }

  private settleKeys(txId: string): string[] {
    const k = this.keys;
    return [k.free, k.sats, k.spent, k.pending, k.counters, k.txs, k.tx(txId)];
  }
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
