import {
  ALL_TX_SHARDS,
  TX_SHARDS,
  forEachTxShard,
  groupByTxShard,
  keyTag,
  readBySlot,
  txShard,
  txShardTag,
} from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { DUPLICATE_NODE, HEADER_BYTES, parseHeader, tscProof } from '@proofline/chain-domain';
import type {
  ChainHeader,
  ChainReader,
  ChainTipInfo,
  HeadersSource,
  OwnerBlock,
  OwnerBlocksPage,
  OwnerBlocksWindow,
  TxInclusion,
} from '@proofline/chain-domain';
import type { VerifiedProof } from './bump';
import { arcCommands } from './lua-commands';
import type { ArcCommands } from './lua-commands';

/** The txId-shard family of ARC's per-transaction keys (`<prefix>:{atx<shard>.<n>}:arc:…`). */
export const ARC_SHARD_FAMILY = 'atx';

/**
 * The keys of one txId shard (`txShard`, 0..63) of the proof store: everything ARC keeps per
 * transaction. A script touches the keys of one shard at a time; nothing here is read together with
 * block-level data in one command.
 */
export function arcShardKeys(prefix: string, shard: number) {
  const p = `${txShardTag(prefix, ARC_SHARD_FAMILY, shard)}:arc`;
  return {
    shard,
    /** HASH txId (32 raw bytes) -> inclusion: blockHash(32) ‖ index u32le ‖ duplicate mask u32le ‖ depth u8 ‖ nodes below the block's shared top (32 each); older values: no depth byte, every node. */
    inclusions: `${p}:inc`,
    /** ZSET txId hex -> ms first watched: published transactions of this shard without a stored proof (the tracker polls these). */
    unproven: `${p}:unproven`,
    /** STRING of this shard's txIds (32 raw bytes each, appended) with a proof in block `hash` (display hex); a SET in stores written before. */
    blockTxIds: (hash: string) => `${p}:block:${hash}`,
    /**
     * STRING with a TTL: block `hash` is being dropped from this shard (the reorg walk). While it
     * exists, a proof into that block is refused here (`arc-store-shard-n.lua`).
     */
    dropping: (hash: string) => `${p}:dropping:${hash}`,
    /** HASH txId hex -> `ms:height`: when (and at which tip) ARC first answered REJECTED for a transient reason. */
    transientRejects: `${p}:transient-rejects`,
    /** HASH txId hex -> ms: the one re-broadcast of a transiently REJECTED transaction, claimed with HSETNX. */
    transientResent: `${p}:transient-resent`,
    /** HASH txId hex -> tip height when a poll first answered SEEN_IN_ORPHAN_MEMPOOL. */
    orphans: `${p}:orphans`,
    /** HASH txId hex -> tip height of its escalation (the one re-send with its parents), claimed with HSETNX. */
    orphansEscalated: `${p}:orphans-escalated`,
  };
}

export type ArcShardKeys = ReturnType<typeof arcShardKeys>;

/**
 * Every Redis key of the ARC proof store, from the injected prefix (config.redisPrefix). Nowhere
 * else spells a key; the Lua scripts receive them as KEYS. Hashes and txIds are stored as 32 raw
 * bytes (not 64 hex characters) where there is one per record, to keep memory per record small.
 *
 * Two kinds of hash tag. Block-level data (one entry per block, not per record: headers, heights,
 * the tip, each block's shared top nodes, which shards hold its inclusions, the owner index, the
 * pass lock, counters) is under `{arc}` (`<prefix>:{arc}:arc:…`). Per-transaction data
 * (inclusions, the watch set, per-block txId lists, verdict bookkeeping) is split into the 64 txId
 * shards ({@link arcShardKeys}, `shard(i)`, `of(txId)`), tags chosen by slot range, so it spreads
 * over the masters. The block event channel keeps its untagged name: pub/sub is not slotted
 * (PUBLISH reaches every node).
 */
export function arcKeys(prefix: string) {
  const p = `${keyTag(prefix, 'arc')}:arc`;
  const shards = ALL_TX_SHARDS.map((s) => arcShardKeys(prefix, s));
  return {
    /** The keys of txId shard `s`. */
    shard: (s: number): ArcShardKeys => shards[s] as ArcShardKeys,
    /** The keys of the shard holding `txId`. */
    of: (txId: string): ArcShardKeys => shards[txShard(txId)] as ArcShardKeys,
    /** Every shard's keys, by shard. */
    shards: shards as readonly ArcShardKeys[],
    /** HASH blockHash (32 raw bytes) -> 80-byte header ‖ height u32le (one per block). */
    blocks: `${p}:blocks`,
    /** HASH height -> blockHash hex of the block last stored at that height. */
    heights: `${p}:heights`,
    /** ZSET blockHash hex scored by height: every stored block, for reconcile's range scan. */
    byHeight: `${p}:by-height`,
    /** HASH {height, hash}: the best chain's tip as the headers source last reported it. */
    tip: `${p}:tip`,
    /** Pub/sub channel of block events (JSON `BlockEvent`), published when the tracker sees a new tip or proves txs in a new block. */
    blockEvents: `${prefix}:arc:events:blocks`,
    /** STRING lock token of the running confirmation pass (one at a time across workers). */
    confirmLock: `${p}:confirm-lock`,
    /** HASH code -> count of transactions ARC rejected (metrics). */
    rejections: `${p}:rejections`,
    /** STRING count of orphans escalated since the deployment started (metrics). */
    orphanEscalations: `${p}:orphan-escalations`,
    /**
     * SET of the txId shards (decimal) holding inclusions in block `hash` (display hex): written
     * before any of them (`storeProofs`), walked by a drop (`dropBlock`) and deleted last.
     */
    blockShards: (hash: string) => `${p}:block-shards:${hash}`,
    /** HASH level u8 ‖ position u32le -> node (32 raw bytes): the top levels of the proofs in block `hash` (display hex), stored once for all its records. */
    blockTop: (hash: string) => `${p}:top:${hash}`,
    /**
     * SET of the owners (for records: tenants) with a txId indexed in block `hash` (display hex):
     * which owners' indexes a drop of that block must clean (`dropBlock`).
     */
    blockOwners: (hash: string) => `${p}:block-owners:${hash}`,
    /** ZSET block hash hex scored by height: the blocks holding txIds of `owner` (a tenant). */
    ownerBlocks: (owner: string) => `${p}:owner:${owner}:blocks`,
    /**
     * HASH block hash hex -> the txIds of `owner` proven in that block, 32 raw bytes each, appended
     * as their proofs are stored (block order within one batch): one key per owner, so moving a txId
     * between blocks stays in one declared key.
     */
    ownerTxIds: (owner: string) => `${p}:owner:${owner}:txids`,
  };
}

export type ArcKeys = ReturnType<typeof arcKeys>;

/**
 * The per-transaction keys as they were before the txId shards, all under `{arc}`: what
 * `redis migrate-keys` splits into the shards. Nothing else reads them.
 */
export function legacyArcKeys(prefix: string) {
  const p = `${keyTag(prefix, 'arc')}:arc`;
  return {
    inclusions: `${p}:inc`,
    unproven: `${p}:unproven`,
    /** The pattern of the per-block txId lists (`<p>:block:<hash>`). */
    blockTxIdsPrefix: `${p}:block:`,
    transientRejects: `${p}:transient-rejects`,
    transientResent: `${p}:transient-resent`,
    orphans: `${p}:orphans`,
    orphansEscalated: `${p}:orphans-escalated`,
  };
}

/** The inclusions hash holding `txId`'s proof, for readers outside this lib (the records' depth cap). */
export function inclusionsKeyOf(prefix: string): (txId: string) => string {
  const keys = arcKeys(prefix);
  return (txId) => keys.of(txId).inclusions;
}

/** A block the store holds a header for (it stored at least one proof in it). */
export interface StoredBlock {
  readonly hash: string;
  readonly height: number;
  readonly headerHex: string;
  /** Header time. */
  readonly time: Date;
}

/** What {@link ArcProofStore.reconcile} found. */
export interface ReconcileReport {
  readonly tip: ChainTipInfo;
  /** Stored blocks that were checked (heights tip-depth+1 … tip, and any above the tip). */
  readonly checked: number;
  /** Blocks that left the main chain, and the txIds whose proofs were dropped with them. */
  readonly dropped: readonly {
    readonly blockHash: string;
    readonly height: number;
    readonly txIds: readonly string[];
  }[];
}

/**
 * Who owns each of `txIds` (for records: the tenant), null where nobody does (a wallet transaction,
 * an unknown txId). The owner index (`arc-index-owner-4.lua`) is filled from it as proofs are stored.
 */
export type OwnerLookup = (txIds: readonly string[]) => Promise<readonly (string | null)[]>;

/** How often `dropBlock` cleans the owners of a block that keeps gaining owners (or shards) before it gives up (a proof stored into it between each clean and the drop). */
const DROP_ATTEMPTS = 5;

/**
 * How long a shard refuses proofs into a block a reorg walk dropped from it
 * (`arc-drop-shard-4.lua`'s marker): longer than any store in flight takes between writing the
 * block-level data and its shards (two round trips), so none writes an inclusion behind the walk.
 * A block that returns to the main chain within it is proven there again after it expires (its
 * txIds stay watched meanwhile).
 */
export const DROP_MARK_MS = 10 * 60_000;

const MAX_LEVELS = 32;
/**
 * The top levels of every proof are kept once per block, not per record: the nodes nearest the
 * root are the same for all of a block's transactions that share a subtree, so a block with many
 * of our records stored them hundreds of times. Six levels = at most 126 nodes per block, which
 * Redis keeps as a listpack (≤ 128 fields of ≤ 64 bytes by default: ~40 bytes a node); a record
 * then stores 32 bytes for each level below them only. See `inclusionValue` and docs/performance.md,
 * "Memory".
 */
export const SHARED_TOP_LEVELS = 6;

/**
 * Verified proofs in Redis, and the read side of the chain built from them (`ChainReader`), so
 * status and GraphQL answer from what this service checked, not from any chain's internals.
 *
 * Form: per txId one binary field (block hash, index, duplicate mask, depth, and 32 bytes for
 * each level below the block's shared top: 41 + 32·max(0, depth − 6) bytes), per block one
 * 84-byte value (header ‖ height) and one small hash of its top-level nodes
 * ({@link SHARED_TOP_LEVELS}). Values written before the shared top (40 + 32·depth bytes, every
 * node inline) still read. Callers MUST store only proofs that passed {@link verifyBump}.
 */
export class ArcProofStore implements ChainReader {
  private readonly keys: ArcKeys;
  private readonly commands: ArcCommands;
  private owners: OwnerLookup | null = null;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = arcKeys(prefix);
    this.commands = arcCommands(redis);
  }

  /**
   * Where the owner of a proven txId comes from (records publication sets the records store's
   * tenant lookup). From then on `storeProofs` keeps the owner index: each owner's blocks and its
   * txIds in each ({@link ownerBlocks}). Without it nothing is indexed.
   */
  setOwnerLookup(lookup: OwnerLookup): void {
    this.owners = lookup;
  }

  /**
   * Stores verified proofs and their blocks' headers, in this order (the contract readers rely on):
   * 1. block-level data under `{arc}` in one MULTI: header, height, the block's shared top nodes
   *    and the set of txId shards that will hold its inclusions;
   * 2. per txId shard, one script (`arc-store-shard-n.lua`, shards concurrently): the inclusions,
   *    the shard's txId list per block, the txIds out of the shard's watch set; it answers where
   *    each txId was proven before, and refuses a block a reorg walk is dropping;
   * 3. with an owner lookup, the owner index (`arc-index-owner-4.lua`, one MULTI), fed those
   *    previous blocks.
   * So no reader sees an inclusion whose block data is missing. Idempotent: stored again, a proof
   * adds nothing, and a store repeated after a crash between steps completes what was missing.
   * Returns the txIds refused (their block is being dropped): they stay watched.
   */
  async storeProofs(proofs: readonly VerifiedProof[]): Promise<string[]> {
    if (proofs.length === 0) return [];
    const k = this.keys;
    const owners = await this.ownersOf(proofs);
    const m = this.redis.multi();
    const blocks = new Set<string>();
    const tops = new Map<string, Map<string, Buffer>>();
    const shardsOf = new Map<string, Set<number>>();
    for (const p of proofs) {
      if (!blocks.has(p.blockHash)) {
        blocks.add(p.blockHash);
        m.hset(k.blocks, raw(p.blockHash), blockValue(p.headerHex, p.blockHeight));
        m.hset(k.heights, String(p.blockHeight), p.blockHash);
        m.zadd(k.byHeight, p.blockHeight, p.blockHash);
        tops.set(p.blockHash, new Map());
        shardsOf.set(p.blockHash, new Set());
      }
      const top = tops.get(p.blockHash) as Map<string, Buffer>;
      for (const [field, node] of topNodes(p)) top.set(field.toString('latin1'), node);
      (shardsOf.get(p.blockHash) as Set<number>).add(txShard(p.txId));
    }
    for (const [hash, top] of tops) {
      if (top.size > 0)
        m.hset(k.blockTop(hash), ...[...top].flatMap(([field, node]) => [Buffer.from(field, 'latin1'), node]));
    }
    for (const [hash, shards] of shardsOf) m.sadd(k.blockShards(hash), ...[...shards].map(String));
    await execAll(m);

    const before = new Map<string, string>(); // txId -> the block it was proven in before ('' none, '!' refused)
    await Promise.all(
      [...groupByTxShard(proofs.map((p) => p.txId))].map(async ([shard, positions]) => {
        const sk = k.shard(shard);
        const group = positions.map((i) => proofs[i] as VerifiedProof);
        const blockIndex = new Map<string, number>();
        for (const p of group) if (!blockIndex.has(p.blockHash)) blockIndex.set(p.blockHash, blockIndex.size + 1);
        const keys = [
          sk.inclusions,
          sk.unproven,
          ...[...blockIndex.keys()].flatMap((hash) => [sk.blockTxIds(hash), sk.dropping(hash)]),
        ];
        const reply = await this.commands.arcStoreShardBuffer(
          keys.length,
          ...keys,
          ...group.flatMap((p) => [raw(p.txId), p.txId, String(blockIndex.get(p.blockHash)), inclusionValue(p)]),
        );
        group.forEach((p, i) => {
          const previous = reply[i] as Buffer;
          if (!before.has(p.txId))
            before.set(p.txId, previous.length === 32 ? previous.toString('hex') : previous.toString());
        });
      }),
    );
    const refused = [...before].filter(([, b]) => b === '!').map(([txId]) => txId);

    const groups = ownerGroups(proofs, owners)
      .map((g) => ({ ...g, txIds: g.txIds.filter((t) => before.get(t) !== '!') }))
      .filter((g) => g.txIds.length > 0);
    if (groups.length > 0) {
      const o = this.redis.multi() as ReturnType<RedisClient['multi']> & ArcCommands;
      for (const g of groups)
        o.arcIndexOwner(
          k.ownerBlocks(g.owner),
          k.ownerTxIds(g.owner),
          k.blockOwners(g.blockHash),
          k.blocks,
          raw(g.blockHash),
          g.blockHash,
          String(g.height),
          g.owner,
          ...g.txIds.flatMap((t) => {
            const previous = before.get(t) ?? '';
            return [raw(t), previous === '' ? '' : raw(previous)];
          }),
        );
      await execAll(o);
    }
    return refused;
  }

  /** The owner of each proof's txId (null: none), or null without an owner lookup. */
  private async ownersOf(proofs: readonly VerifiedProof[]): Promise<Map<string, string> | null> {
    if (!this.owners) return null;
    const txIds = [...new Set(proofs.map((p) => p.txId))];
    const found = await this.owners(txIds);
    const out = new Map<string, string>();
    txIds.forEach((txId, i) => {
      const owner = found[i];
      if (owner) out.set(txId, owner);
    });
    return out;
  }

  /**
   * Indexes the owners of the proofs already stored in block `hash` (proofs stored before the
   * owner index existed, or without a lookup), idempotently (`arc-index-owner-4.lua` adds only
   * txIds not listed yet). Returns how many txIds it added. Needs the owner lookup.
   */
  async indexOwnersOfBlock(hash: string): Promise<number> {
    if (!this.owners) throw new Error('indexOwnersOfBlock needs an owner lookup (setOwnerLookup)');
    const block = await this.blockByHash(hash);
    if (!block) return 0;
    const txIds = await this.txIdsOfBlock(hash);
    const owners = await this.owners(txIds);
    const byOwner = new Map<string, string[]>();
    txIds.forEach((txId, i) => {
      const owner = owners[i];
      if (owner) byOwner.set(owner, [...(byOwner.get(owner) ?? []), txId]);
    });
    const k = this.keys;
    let added = 0;
    for (const [owner, ids] of byOwner)
      added += Math.max(
        0,
        await this.commands.arcIndexOwner(
          k.ownerBlocks(owner),
          k.ownerTxIds(owner),
          k.blockOwners(hash),
          k.blocks,
          raw(hash),
          hash,
          String(block.height),
          owner,
          ...ids.flatMap((t) => [raw(t), '']),
        ),
      );
    return added;
  }

  /** {@link indexOwnersOfBlock} for every stored block; returns the blocks walked and the txIds added. */
  async indexOwners(): Promise<{ blocks: number; added: number }> {
    const blocks = await this.blocksFrom(0);
    let added = 0;
    for (const b of blocks) added += await this.indexOwnersOfBlock(b.hash);
    return { blocks: blocks.length, added };
  }

  /**
   * A page of the blocks holding proven txIds of `owner`, newest first (`arc-owner-blocks-3.lua`,
   * one round trip): keyset paging on (height, hash), so pages hold still while blocks arrive.
   */
  async ownerBlocks(owner: string, page: OwnerBlocksPage): Promise<OwnerBlocksWindow> {
    const backward = page.last !== undefined;
    const size = (backward ? page.last : page.first) ?? 0;
    const k = this.keys;
    const flat = await this.commands.arcOwnerBlocksBuffer(
      k.ownerBlocks(owner),
      k.ownerTxIds(owner),
      k.blocks,
      backward ? 'last' : 'first',
      String(size + 1),
      page.after ? String(page.after.height) : '',
      page.after?.hash.toLowerCase() ?? '',
      page.before ? String(page.before.height) : '',
      page.before?.hash.toLowerCase() ?? '',
    );
    const total = Number(flat[0]);
    const beyond = Number(flat[1]) === 1;
    let blocks: OwnerBlock[] = [];
    for (let i = 2; i + 3 < flat.length; i += 4) {
      const stored = flat[i + 3] as Buffer;
      // A block listed but not stored is never left by dropBlock; skip rather than invent a time.
      if (stored.length !== HEADER_BYTES + 4) continue;
      const hash = (flat[i] as Buffer).toString();
      blocks.push({
        hash,
        height: Number(flat[i + 1]),
        time: toStoredBlock(hash, stored).time,
        count: Number(flat[i + 2]),
      });
    }
    const more = blocks.length > size;
    if (more) blocks = backward ? blocks.slice(1) : blocks.slice(0, size);
    return {
      total,
      blocks,
      hasOlder: backward ? beyond : more,
      hasNewer: backward ? more : beyond,
    };
  }

  /** Block `hash` in `owner`'s block list (one pipeline), or null when the owner has no proven txId there. */
  async ownerBlock(owner: string, hash: string): Promise<OwnerBlock | null> {
    const k = this.keys;
    const id = hash.toLowerCase();
    const replies = await this.redis
      .pipeline()
      .zscore(k.ownerBlocks(owner), id)
      .hstrlen(k.ownerTxIds(owner), id)
      .hgetBuffer(k.blocks, raw(id))
      .exec();
    const [score, length, stored] = (replies ?? []).map(([err, value]) => {
      if (err) throw err;
      return value;
    }) as [string | null, number, Buffer | null];
    if (score === null || stored === null || length === 0) return null;
    return { hash: id, height: Number(score), time: toStoredBlock(id, stored).time, count: Math.floor(length / 32) };
  }

  /** The proven txIds of `owner` in block `hash`, positions [start, end) of its list there, and their count (`arc-owner-txids-1.lua`). */
  async ownerTxIds(
    owner: string,
    hash: string,
    start: number,
    end: number,
  ): Promise<{ count: number; txIds: string[] }> {
    const [count, ...txIds] = await this.commands.arcOwnerTxidsBuffer(
      this.keys.ownerTxIds(owner),
      hash.toLowerCase(),
      String(Math.max(0, start)),
      String(Math.max(0, end)),
    );
    return { count: Number(count), txIds: txIds.map((t) => (t as Buffer).toString('hex')) };
  }

  /**
   * Stores a block's header without proofs (the tip's, so block queries can answer it before
   * any record is proven in it). The header MUST come from a {@link HeadersSource} (checked to
   * hash to its hash); reconcile re-checks it like any stored block. Idempotent.
   */
  async storeHeader(header: Pick<ChainHeader, 'hash' | 'height' | 'headerHex'>): Promise<void> {
    const k = this.keys;
    const replies = await this.redis
      .multi()
      .hset(k.blocks, raw(header.hash), blockValue(header.headerHex, header.height))
      .hset(k.heights, String(header.height), header.hash)
      .zadd(k.byHeight, header.height, header.hash)
      .exec();
    for (const [err] of replies ?? []) if (err) throw err;
  }

  /** Adds published transactions to the watch set (the tracker polls them until proven); keeps the first time. */
  async watch(txIds: readonly string[], at: Date): Promise<void> {
    await forEachTxShard(txIds, (shard, ids) =>
      this.redis.zadd(this.keys.shard(shard).unproven, 'NX', ...ids.flatMap((t) => [String(at.getTime()), t])),
    );
  }

  /** When each txId was first watched (ms), null where it is not watched. */
  async watchedSince(txIds: readonly string[]): Promise<(number | null)[]> {
    if (txIds.length === 0) return [];
    const scores = await readBySlot(
      txIds.map((t) => this.keys.of(t).unproven),
      (keys, positions) => this.redis.zmscore(keys[0] as string, ...positions.map((i) => txIds[i] as string)),
    );
    return scores.map((s) => (s === null ? null : Number(s)));
  }

  /** True while `txId` is watched (published, or refused but possibly still mined, and not proven). */
  async isWatched(txId: string): Promise<boolean> {
    return (await this.redis.zscore(this.keys.of(txId).unproven, txId)) !== null;
  }

  /** Stops watching transactions (rejected for good). */
  async unwatch(txIds: readonly string[]): Promise<void> {
    await forEachTxShard(txIds, (shard, ids) => this.redis.zrem(this.keys.shard(shard).unproven, ...ids));
  }

  /**
   * Up to `limit` watched txIds, about the longest waiting first; with `waitedAtLeastMs`, only those
   * watched at least that long before `now` (the ones their callback had time to prove). Each of
   * the 64 shards gives its oldest ⌈2·limit / 64⌉ (concurrent reads), the oldest of those are
   * taken: exact while no shard has more than that many waiting, and no shard starves otherwise.
   */
  async watched(limit: number, waitedAtLeastMs = 0, now: Date = new Date()): Promise<string[]> {
    if (limit <= 0) return [];
    const max = waitedAtLeastMs <= 0 ? '+inf' : String(now.getTime() - waitedAtLeastMs);
    const each = Math.max(1, Math.ceil((2 * limit) / TX_SHARDS));
    const shards = await Promise.all(
      this.keys.shards.map((sk) => this.redis.zrangebyscore(sk.unproven, '-inf', max, 'WITHSCORES', 'LIMIT', 0, each)),
    );
    const all: { txId: string; at: number }[] = [];
    for (const flat of shards)
      for (let i = 0; i + 1 < flat.length; i += 2) all.push({ txId: flat[i] as string, at: Number(flat[i + 1]) });
    all.sort((a, b) => a.at - b.at || (a.txId < b.txId ? -1 : a.txId > b.txId ? 1 : 0));
    return all.slice(0, limit).map((w) => w.txId);
  }

  /** How many published transactions wait for a proof (every shard). */
  async watchedCount(): Promise<number> {
    const counts = await Promise.all(this.keys.shards.map((sk) => this.redis.zcard(sk.unproven)));
    return counts.reduce((a, b) => a + b, 0);
  }

  /** Counts a transaction ARC rejected, by ARC's code (a metric). */
  async countRejection(code: string): Promise<void> {
    await this.redis.hincrby(this.keys.rejections, code, 1);
  }

  /** Rejections by ARC code since the deployment started. */
  async rejections(): Promise<Record<string, number>> {
    const all = await this.redis.hgetall(this.keys.rejections);
    return Object.fromEntries(Object.entries(all).map(([code, n]) => [code, Number(n)]));
  }

  /** The stored tip (hash and height as the headers source last reported), or null before any report. */
  async tip(): Promise<ChainTipInfo | null> {
    const [height, hash] = await this.redis.hmget(this.keys.tip, 'height', 'hash');
    return height == null || hash == null ? null : { height: Number(height), hash };
  }

  /**
   * Records the best chain's tip as the headers source reported it, whatever is stored: only the
   * reorg check (`reconcile`) does this, as a reorg may lower the tip. Everyone else raises it.
   */
  async setTip(tip: ChainTipInfo): Promise<void> {
    await this.redis.hset(this.keys.tip, 'height', String(tip.height), 'hash', tip.hash);
  }

  /**
   * Moves the stored tip up to `tip` when it is higher than the stored one (`arc-raise-tip-1.lua`,
   * atomic): a proof's block, or the headers source's tip read before newer blocks were proven,
   * never moves it down. True when it moved.
   */
  async raiseTip(tip: ChainTipInfo): Promise<boolean> {
    return (await this.commands.arcRaiseTip(this.keys.tip, String(tip.height), tip.hash)) === 1;
  }

  /** Height of the best chain's tip as last reported; -1 before any report. */
  async tipHeight(): Promise<number> {
    const h = await this.redis.hget(this.keys.tip, 'height');
    return h === null ? -1 : Number(h);
  }

  /**
   * Where each txId is mined, with its verified TSC proof (null: no proof stored), in two round
   * trips whatever their number: the inclusions (one HMGET per txId shard asked for, concurrently:
   * `readBySlot`), then the blocks they point into and the shared top nodes their proofs need (one
   * pipeline under `{arc}`: one HMGET of the block records, one HMGET per block's top, only the
   * fields asked for). Block data is written before inclusions and dropped after them, so the
   * second read finds the block of every inclusion the first found unless a reorg dropped it in
   * between.
   * An inclusion whose block record is gone by the second read (a reorg dropped it in between)
   * reads as null, as it would a moment later. A block dropped and stored again in between may
   * lack a top node the first read needs: the read is then repeated once; a node still missing is
   * damage and throws (never a wrong path).
   */
  async inclusions(txIds: readonly string[]): Promise<(TxInclusion | null)[]> {
    if (txIds.length === 0) return [];
    try {
      return await this.readInclusions(txIds);
    } catch (err) {
      if (!(err instanceof MissingTopNodeError)) throw err;
      return this.readInclusions(txIds);
    }
  }

  private async readInclusions(txIds: readonly string[]): Promise<(TxInclusion | null)[]> {
    const k = this.keys;
    const values = await readBySlot(
      txIds.map((t) => k.of(t).inclusions),
      (keys, positions) => this.redis.hmgetBuffer(keys[0] as string, ...positions.map((i) => raw(txIds[i] as string))),
    );
    const parsed = values.map((v) => (v && v.length >= 40 ? parseInclusion(v) : null));
    // Per block: the top fields its records here need (each as its latin1 string).
    const needs = new Map<string, Set<string>>();
    for (const inc of parsed) {
      if (!inc) continue;
      let fields = needs.get(inc.blockHash);
      if (!fields) needs.set(inc.blockHash, (fields = new Set()));
      for (const field of inc.topFields) fields.add(field);
    }
    if (needs.size === 0) return txIds.map(() => null);
    const hashes = [...needs.keys()];
    const withTop = hashes.filter((hash) => (needs.get(hash) as Set<string>).size > 0);
    const pipeline = this.redis.pipeline().hmgetBuffer(k.blocks, ...hashes.map(raw));
    for (const hash of withTop)
      pipeline.hmgetBuffer(
        k.blockTop(hash),
        ...[...(needs.get(hash) as Set<string>)].map((f) => Buffer.from(f, 'latin1')),
      );
    const replies = (await pipeline.exec()) ?? [];
    for (const [err] of replies) if (err) throw err;
    const blockOf = new Map<string, Buffer | null>();
    ((replies[0]?.[1] ?? []) as (Buffer | null)[]).forEach((b, i) => blockOf.set(hashes[i] as string, b));
    const topOf = new Map<string, Map<string, Buffer>>();
    withTop.forEach((hash, i) => {
      const fields = [...(needs.get(hash) as Set<string>)];
      const nodes = new Map<string, Buffer>();
      ((replies[i + 1]?.[1] ?? []) as (Buffer | null)[]).forEach((node, j) => {
        if (node) nodes.set(fields[j] as string, node);
      });
      topOf.set(hash, nodes);
    });
    return txIds.map((txId, i) => {
      const inc = parsed[i];
      const block = inc ? blockOf.get(inc.blockHash) : null;
      if (!inc || !block || block.length < HEADER_BYTES + 4) return null;
      const nodes = inclusionNodes(txId, inc, topOf.get(inc.blockHash) ?? new Map());
      const headerHex = block.subarray(0, HEADER_BYTES).toString('hex');
      return {
        blockHash: inc.blockHash,
        blockHeight: block.readUInt32LE(HEADER_BYTES),
        blockTime: new Date(parseHeader(headerHex).time * 1000),
        index: inc.index,
        proof: tscProof(inc.index, txId, headerHex, nodes),
      };
    });
  }

  async blockByHash(hash: string): Promise<StoredBlock | null> {
    const value = await this.redis.hgetBuffer(this.keys.blocks, raw(hash));
    return value ? toStoredBlock(hash, value) : null;
  }

  async blockByHeight(height: number): Promise<StoredBlock | null> {
    const hash = await this.redis.hget(this.keys.heights, String(height));
    return hash === null ? null : this.blockByHash(hash);
  }

  /** TxIds this service holds proofs for in block `hash`, in block order (not the whole block). */
  async txIdsOfBlock(hash: string): Promise<string[]> {
    const shards = (await this.redis.smembers(this.keys.blockShards(hash))).map(Number);
    const flats = await Promise.all(
      shards.map((s) => {
        const sk = this.keys.shard(s);
        return this.commands.arcBlockTxidsBuffer(sk.blockTxIds(hash), sk.inclusions, raw(hash));
      }),
    );
    const pairs: { txId: string; index: number }[] = [];
    for (const flat of flats)
      for (let i = 0; i + 1 < flat.length; i += 2)
        pairs.push({ txId: (flat[i] as Buffer).toString('hex'), index: (flat[i + 1] as Buffer).readUInt32LE(0) });
    return pairs.sort((a, b) => a.index - b.index).map((p) => p.txId);
  }

  /** Stored blocks with height ≥ `fromHeight`, lowest first. */
  async blocksFrom(fromHeight: number): Promise<{ hash: string; height: number }[]> {
    const flat = await this.redis.zrangebyscore(this.keys.byHeight, Math.max(0, fromHeight), '+inf', 'WITHSCORES');
    const out: { hash: string; height: number }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ hash: flat[i] as string, height: Number(flat[i + 1]) });
    return out;
  }

  /**
   * Forgets a block and the proofs pointing into it; the txIds that lost their proof go back to
   * the watch set. Returns them. A walk, idempotent and restartable:
   * 1. every owner index listing the block forgets it (one MULTI under `{arc}`);
   * 2. each txId shard holding inclusions in the block ({@link dropShard}, concurrently): marks the
   *    block dropped there (a marker living {@link DROP_MARK_MS}, which refuses a store racing the
   *    walk), deletes its inclusions and re-watches their txIds, atomically per shard;
   * 3. the block-level data last (`arc-drop-block-6.lua`), refused while an owner index lists the
   *    block again or a shard not walked gained inclusions in it: those are cleaned and the step
   *    repeated.
   * A crash before step 3 leaves the block stored, so the next reconcile walks it again.
   * @throws Error when owners or shards keep appearing after {@link DROP_ATTEMPTS} rounds (nothing is lost: the block stays stored and the next reconcile drops it).
   */
  async dropBlock(hash: string, height: number, at: Date = new Date()): Promise<string[]> {
    const k = this.keys;
    const dropped: string[] = [];
    const walked = new Set<number>();
    for (let attempt = 0; attempt < DROP_ATTEMPTS; attempt++) {
      const owners = await this.redis.smembers(k.blockOwners(hash));
      if (owners.length > 0) {
        const m = this.redis.multi();
        for (const owner of owners)
          m.hdel(k.ownerTxIds(owner), hash).zrem(k.ownerBlocks(owner), hash).srem(k.blockOwners(hash), owner);
        await execAll(m);
      }
      const shards = (await this.redis.smembers(k.blockShards(hash))).map(Number).filter((s) => !walked.has(s));
      const lost = await Promise.all(shards.map((s) => this.dropShard(hash, s, at)));
      dropped.push(...lost.flat());
      for (const s of shards) walked.add(s);
      const { status } = await this.dropBlockData(hash, height, walked);
      if (status === 'OK') return dropped;
    }
    throw new Error(`block ${hash}: owners or shards kept being added to it while it was dropped`);
  }

  /**
   * The last step of {@link dropBlock} (`arc-drop-block-6.lua`): forgets block `hash`'s block-level
   * data once no owner index lists it and every shard of its shard set is among `walked`.
   * Otherwise changes nothing and answers why: `OWNERS`, or `SHARDS` with the shards not walked.
   */
  async dropBlockData(
    hash: string,
    height: number,
    walked: Iterable<number>,
  ): Promise<{ status: 'OK' | 'OWNERS' } | { status: 'SHARDS'; shards: number[] }> {
    const k = this.keys;
    const [status, ...rest] = await this.commands.arcDropBlock(
      k.blocks,
      k.heights,
      k.byHeight,
      k.blockTop(hash),
      k.blockOwners(hash),
      k.blockShards(hash),
      raw(hash),
      hash,
      String(height),
      ...[...walked].map(String),
    );
    if (status === 'SHARDS') return { status, shards: rest.map(Number) };
    if (status === 'OK' || status === 'OWNERS') return { status };
    throw new Error(`arc-drop-block-6.lua answered ${String(status)}`);
  }

  /**
   * One shard's step of {@link dropBlock} (`arc-drop-shard-4.lua`): marks block `hash` dropped in
   * txId shard `shard`, deletes the shard's inclusions pointing into it and puts their txIds back
   * in the shard's watch set, atomically. Idempotent (run again it drops nothing more). Returns
   * the txIds that lost their proof.
   */
  async dropShard(hash: string, shard: number, at: Date = new Date()): Promise<string[]> {
    const sk = this.keys.shard(shard);
    const lost = await this.commands.arcDropShardBuffer(
      sk.dropping(hash),
      sk.blockTxIds(hash),
      sk.inclusions,
      sk.unproven,
      raw(hash),
      String(at.getTime()),
      String(DROP_MARK_MS),
    );
    return lost.map((b) => b.toString('hex'));
  }

  /**
   * Reorg handling: asks the headers source for the tip and re-checks every stored block of the
   * last `depth` heights (and any stored above the tip). A block that is unknown, off the main
   * chain (confirmations -1) or at another height has its proofs dropped, so those records go
   * back to waiting and the tracker proves them again in their new block.
   * @throws HeadersSourceError when the source cannot answer (nothing is dropped then).
   */
  async reconcile(headers: HeadersSource, depth: number, at: Date = new Date()): Promise<ReconcileReport> {
    const tip = await headers.tip();
    await this.setTip(tip);
    const stored = await this.blocksFrom(tip.height - depth + 1);
    const dropped: { blockHash: string; height: number; txIds: string[] }[] = [];
    for (const block of stored) {
      const header = await headers.headerByHash(block.hash);
      if (header && header.confirmations >= 1 && header.height === block.height) continue;
      dropped.push({
        blockHash: block.hash,
        height: block.height,
        txIds: await this.dropBlock(block.hash, block.height, at),
      });
    }
    return { tip, checked: stored.length, dropped };
  }
}

function raw(hex: string): Buffer {
  return Buffer.from(hex, 'hex');
}

function blockValue(headerHex: string, height: number): Buffer {
  const out = Buffer.alloc(HEADER_BYTES + 4);
  Buffer.from(headerHex, 'hex').copy(out, 0);
  out.writeUInt32LE(height, HEADER_BYTES);
  return out;
}

function toStoredBlock(hash: string, value: Buffer): StoredBlock {
  const headerHex = value.subarray(0, HEADER_BYTES).toString('hex');
  return {
    hash,
    height: value.readUInt32LE(HEADER_BYTES),
    headerHex,
    time: new Date(parseHeader(headerHex).time * 1000),
  };
}

/** How many levels of a `depth`-level proof are stored with the record (the rest is the block's shared top). */
function inlineLevels(depth: number): number {
  return Math.max(0, depth - SHARED_TOP_LEVELS);
}

/** {@link topField} as a latin1 string (map keys of the read path, no Buffer per lookup). */
function topKey(level: number, index: number): string {
  const position = Math.floor(index / 2 ** level);
  const sibling = position % 2 === 0 ? position + 1 : position - 1;
  return String.fromCharCode(
    level,
    sibling & 0xff,
    (sibling >>> 8) & 0xff,
    (sibling >>> 16) & 0xff,
    (sibling >>> 24) & 0xff,
  );
}

/** The field of the node at `level` on the path of the transaction at `index`: level u8 ‖ position of the sibling u32le. */
function topField(level: number, index: number): Buffer {
  const out = Buffer.alloc(5);
  out.writeUInt8(level, 0);
  const position = Math.floor(index / 2 ** level);
  out.writeUInt32LE(position % 2 === 0 ? position + 1 : position - 1, 1);
  return out;
}

/**
 * blockHash(32) ‖ index u32le ‖ duplicate mask u32le ‖ depth u8 ‖ the nodes of the k levels below
 * the shared top (32 bytes each, zeros for "*"): 41 + 32·k bytes, so readers take k from the
 * length and the rest (depth − k levels) from the block's top. The older form, every node inline
 * and no depth byte, is 40 + 32·depth bytes; the lengths tell them apart (mod 32: 9 vs 8).
 */
function inclusionValue(p: VerifiedProof): Buffer {
  const nodes = p.proof.nodes;
  if (nodes.length > MAX_LEVELS) throw new Error(`a proof of ${nodes.length} levels does not fit`);
  const inline = inlineLevels(nodes.length);
  const out = Buffer.alloc(41 + 32 * inline);
  raw(p.blockHash).copy(out, 0);
  out.writeUInt32LE(p.proof.index, 32);
  let mask = 0;
  nodes.forEach((node, level) => {
    if (node === DUPLICATE_NODE) mask |= 1 << level;
    else if (level < inline) raw(node).copy(out, 41 + 32 * level);
  });
  out.writeUInt32LE(mask >>> 0, 36);
  out.writeUInt8(nodes.length, 40);
  return out;
}

/** The proof's nodes above its inline levels, as fields of the block's shared top ("*" needs none). */
function topNodes(p: VerifiedProof): [Buffer, Buffer][] {
  const nodes = p.proof.nodes;
  const out: [Buffer, Buffer][] = [];
  for (let level = inlineLevels(nodes.length); level < nodes.length; level++) {
    const node = nodes[level] as string;
    if (node !== DUPLICATE_NODE) out.push([topField(level, p.proof.index), raw(node)]);
  }
  return out;
}

/** A stored inclusion value, decoded (see {@link inclusionValue}). */
interface ParsedInclusion {
  readonly blockHash: string;
  readonly index: number;
  readonly mask: number;
  readonly depth: number;
  /** Levels stored in the value; the levels from here up to `depth` are the block's shared top. */
  readonly inline: number;
  /** Offset of the first inline node. */
  readonly base: number;
  readonly value: Buffer;
  /** The fields of the block's top this proof needs (its non-"*" levels above the inline ones). */
  readonly topFields: readonly string[];
}

/** Decodes an inclusion value: the current form (41 + 32·k bytes) or the older one, every node inline (40 + 32·depth). */
function parseInclusion(v: Buffer): ParsedInclusion {
  const index = v.readUInt32LE(32);
  const mask = v.readUInt32LE(36);
  const legacy = (v.length - 40) % 32 === 0;
  const depth = legacy ? (v.length - 40) / 32 : v.readUInt8(40);
  // Inline levels from the length, not from SHARED_TOP_LEVELS: a value written with another number of shared levels reads the same.
  const inline = legacy ? depth : (v.length - 41) / 32;
  const topFields: string[] = [];
  for (let level = inline; level < depth; level++) if (!((mask >>> level) & 1)) topFields.push(topKey(level, index));
  return {
    blockHash: v.subarray(0, 32).toString('hex'),
    index,
    mask,
    depth,
    inline,
    base: legacy ? 40 : 41,
    value: v,
    topFields,
  };
}

/** A stored proof's top node is missing although its block is stored. */
class MissingTopNodeError extends Error {
  constructor(txId: string, level: number) {
    super(`the stored proof of ${txId} lacks its block's top node at level ${level}`);
    this.name = 'MissingTopNodeError';
  }
}

/**
 * The proof's nodes, leaf level first: "*" for a duplicate, inline ones from the value, the rest
 * from its block's top (`top`: latin1 field -> node). @throws MissingTopNodeError when a top node
 * is missing: the store writes a block's top before its inclusions and drops it after them, so
 * that is damage or a block stored again between the two reads of
 * {@link ArcProofStore.inclusions}, never a state.
 */
function inclusionNodes(txId: string, inc: ParsedInclusion, top: ReadonlyMap<string, Buffer>): string[] {
  const nodes: string[] = [];
  for (let level = 0; level < inc.depth; level++) {
    if ((inc.mask >>> level) & 1) nodes.push(DUPLICATE_NODE);
    else if (level < inc.inline)
      nodes.push(inc.value.subarray(inc.base + 32 * level, inc.base + 32 * (level + 1)).toString('hex'));
    else {
      const node = top.get(topKey(level, inc.index));
      if (!node || node.length !== 32) throw new MissingTopNodeError(txId, level);
      nodes.push(node.toString('hex'));
    }
  }
  return nodes;
}

/**
 * The proofs grouped by owner and block, each group's txIds in block order and distinct (the last
 * proof of a txId wins, as in `arc-store-shard-n.lua`); empty without owners.
 */
function ownerGroups(
  proofs: readonly VerifiedProof[],
  owners: ReadonlyMap<string, string> | null,
): { owner: string; blockHash: string; height: number; txIds: string[] }[] {
  if (!owners) return [];
  const last = new Map<string, VerifiedProof>();
  for (const p of proofs) last.set(p.txId, p);
  const groups = new Map<string, { owner: string; blockHash: string; height: number; proofs: VerifiedProof[] }>();
  for (const p of last.values()) {
    const owner = owners.get(p.txId);
    if (!owner) continue;
    const id = `${owner} ${p.blockHash}`;
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { owner, blockHash: p.blockHash, height: p.blockHeight, proofs: [] }));
    g.proofs.push(p);
  }
  return [...groups.values()].map((g) => ({
    owner: g.owner,
    blockHash: g.blockHash,
    height: g.height,
    txIds: g.proofs.sort((a, b) => a.proof.index - b.proof.index).map((p) => p.txId),
  }));
}

/** Runs a MULTI and throws its first failed command's error. */
async function execAll(m: ReturnType<RedisClient['multi']>): Promise<void> {
  const replies = await m.exec();
  for (const [err] of replies ?? []) if (err) throw err;
}
