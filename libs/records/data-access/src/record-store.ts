import path from 'node:path';
import type { RedisClient } from '@proofline/shared-redis';
import { poolCommitLua } from '@proofline/chain-wallet';
import {
  PartitionIndex,
  Partitions,
  SINGLE_PARTITION_UNIT,
  fromScriptReply,
  isClusterClient,
  keyTag,
  loadLuaCommands,
} from '@proofline/shared-redis';
import type { PartitionLayouts, ReplyTable } from '@proofline/shared-redis';
import { extensionOf, withExtension } from '@proofline/chain-domain';
import { encodedContentType } from '@proofline/records-domain';
import type { PublicationState, RecordFamily, RecordKind, RecordMeta } from '@proofline/records-domain';
import type { EncoderName } from '@proofline/shared-config';

/**
 * Every Redis key of the records lib in one records partition (`unit`, shared-redis
 * `Partitions`), built from the deployment's prefix. Nowhere else spells them. They live under
 * the partition's tag (`<prefix>:{<unit>}`), with that partition's shard of the funding pool
 * (chain-wallet `walletKeys`): one accept script stores a record, its chain entry, its outbox
 * entry and its funding together, so on a Redis Cluster they must share a slot. A chain's
 * records all live in the partition of its create. The default unit, `rec`, is the one partition
 * of `REDIS_PARTITIONS=1` (and the layout from before partitions).
 */
export function recordsKeys(prefix: string, unit: string = SINGLE_PARTITION_UNIT) {
  const t = keyTag(prefix, unit);
  return {
    /** HASH: one record (metadata, bytes, publication state); its raw transaction is `tx(…)`. */
    record: (txId: string) => `${t}:records:rec:${txId}`,
    /**
     * STRING: the record's raw transaction, binary. Kept beside the hash, not in it: one value over
     * 64 bytes turns a small hash from a listpack into a hashtable (~1.9 KB instead of ~0.4 KB a
     * record). Records accepted before this key existed keep `rawTx` (hex) in their hash; readers
     * fall back to it.
     */
    tx: (txId: string) => `${t}:records:tx:${txId}`,
    /**
     * STRING: what Extended Format adds to `tx(…)` (per input, the satoshis and locking script it
     * spends; chain-domain `extensionOf`), binary: publication sends `withExtension(tx, ef)`.
     * Only when it is over 64 B (a linked update's two inputs): a shorter one is the record hash's
     * field `ef`, which keeps the hash a listpack. Absent for records accepted before records
     * were sent in EF: they are sent raw.
     */
    ef: (txId: string) => `${t}:records:ef:${txId}`,
    /** LIST: txIds of a linked chain in order (index = position); chainId = the create's txId. */
    chain: (chainId: string) => `${t}:records:chain:${chainId}`,
    /**
     * ZSET (transactional outbox): member txId, score acceptance time (ms); removed once published
     * or rejected. A record is in it exactly while its state is `pending` (accept adds both, settle
     * removes both, revive puts both back): settle-3.lua reads a successor's state from it.
     */
    outbox: `${t}:records:outbox`,
    /**
     * STRING (JSON `{since, httpStatus, detail}`, with a TTL): publication is paused because the
     * chain answered a problem about the request itself, not about a transaction (publication-pause.ts).
     * One for the deployment, under `rec` whatever the partition.
     */
    publicationPaused: `${keyTag(prefix, SINGLE_PARTITION_UNIT)}:records:publication-paused`,
  };
}

export type RecordsKeys = ReturnType<typeof recordsKeys>;

/** The records scripts' reply tables (mapped with `fromScriptReply` from shared-redis). */

/** `accept-root-15.lua` and `accept-successor-17.lua`. */
export const ACCEPT_REPLIES: { readonly [K in AcceptOutcome]: K } = {
  OK: 'OK',
  /** The txId is already stored (nothing changed). */
  EXISTS: 'EXISTS',
  TX_NOT_FOUND: 'TX_NOT_FOUND',
  WRONG_FAMILY: 'WRONG_FAMILY',
  TOKEN_INVALID: 'TOKEN_INVALID',
  FORBIDDEN: 'FORBIDDEN',
  NOT_END: 'NOT_END',
  /** The chain already holds MAX_UNCONFIRMED_LINKS unconfirmed versions. */
  CHAIN_DEPTH: 'CHAIN_DEPTH',
  /** The previous record's chainId is not the one read before the script ran. */
  CHAIN_MISMATCH: 'CHAIN_MISMATCH',
  BACKPRESSURE: 'BACKPRESSURE',
  /** A funding input's lease expired before the script ran (the pool's commit contract): build again. */
  LEASE_LOST: 'LEASE_LOST',
  /** A funding input taken straight from free is not free any more (another writer has it): build again. */
  TAKEN: 'TAKEN',
};

/** `navigate-2.lua`: its first reply element. */
export const NAVIGATE_REPLIES: ReplyTable<'OK' | 'TX_NOT_FOUND' | 'WRONG_FAMILY'> = {
  OK: 'OK',
  TX_NOT_FOUND: 'TX_NOT_FOUND',
  WRONG_FAMILY: 'WRONG_FAMILY',
};

/** `settle-3.lua`'s first reply element: 1 when the state changed, 0 when already settled or unknown. */
export const SETTLE_REPLIES: ReplyTable<boolean> = { '1': true, '0': false };

/** A record about to be accepted, with its signed transaction. */
export interface NewRecord {
  readonly txId: string;
  readonly kind: RecordKind;
  readonly tenant: string;
  readonly contentType: string;
  readonly encoders: readonly EncoderName[];
  readonly bytes: Uint8Array;
  /** The signed transaction, stored as bytes (the `tx` key): what receipts carry, what the txId hashes. */
  readonly rawTx: Uint8Array;
  /**
   * The same transaction in Extended Format, when the builder made one: only what EF adds is
   * stored (the `ef` key, 34 bytes a P2PKH input); publication sends the EF rebuilt from both.
   */
  readonly ef?: Uint8Array;
  /** Output the next record spends (linked create/update). */
  readonly link: { readonly vout: number; readonly satoshis: number } | null;
  /** sha256 hex of the record's update token (linked create/update). */
  readonly tokenHash: string | null;
  readonly acceptedAt: Date;
}

/** How a successor (update/delete) may link to its previous record. */
export interface SuccessorLink {
  readonly prevTxId: string;
  readonly chainId: string;
  /** Hash of the supplied updateToken, or null: then the caller's tenant must own the chain. */
  readonly tokenHash: string | null;
  readonly callerTenant: string;
}

/**
 * What the accept scripts (`accept-root-15.lua`, `accept-successor-17.lua`) answer; see
 * {@link ACCEPT_REPLIES} and the scripts' headers for what each means.
 */
export type AcceptOutcome =
  | 'OK'
  | 'EXISTS'
  | 'TX_NOT_FOUND'
  | 'WRONG_FAMILY'
  | 'TOKEN_INVALID'
  | 'FORBIDDEN'
  | 'NOT_END'
  | 'CHAIN_DEPTH'
  | 'CHAIN_MISMATCH'
  | 'BACKPRESSURE'
  | 'LEASE_LOST'
  | 'TAKEN';

/**
 * The funding pool's step of an accept: the pool's commit contract KEYS and ARGV
 * (`FundingPool.commitKeys(txId)` / `commitArgs(...)`, 9 and 7 entries), moved in the same
 * script that stores the record.
 */
export interface PoolCommitCall {
  /** The records partition the record goes to; the pool keys are that partition's shard. */
  readonly unit: string;
  readonly keys: readonly string[];
  readonly args: readonly string[];
}

/**
 * Write-path policy: `maxPending` accepted records may wait for publication (0 = no limit); a
 * linked chain may hold `maxUnconfirmed` unconfirmed versions (successors only; 0 = no limit).
 */
export interface AcceptOptions {
  /** Deployment-wide; each partition's outbox takes `ceil(maxPending / partitions)`. */
  readonly maxPending?: number;
  readonly maxUnconfirmed?: number;
}

export interface RecordStoreOptions {
  /**
   * The proof store's HASH holding `txId`'s stored proof, if any, under the 32 raw bytes of the
   * txId (chain-arc `arcKeys(prefix).of(txId).inclusions`: one per txId shard): what a chain's
   * unconfirmed versions are counted against (read between the two calls of an accept at the cap;
   * it is another unit than the records, so the accept script cannot read it). Absent (a
   * composition without a proof store): no cap, whatever `maxUnconfirmed` says.
   */
  readonly confirmedIndexKeyOf?: (txId: string) => string;
  /** Number of records partitions (`REDIS_PARTITIONS`; default 1: everything under `rec`). */
  readonly partitions?: number;
  /** The partition counts the deployment has run with (shared with the funding pool's; see `Partitions`). */
  readonly layouts?: PartitionLayouts;
  /** The txId → partition index (shared with the funding pool; one is made when absent). */
  readonly index?: PartitionIndex;
}

export type NavigateOutcome =
  | { readonly status: 'OK'; readonly txIds: string[]; readonly endOfLinks: boolean }
  | { readonly status: 'TX_NOT_FOUND' | 'WRONG_FAMILY' };

/** What the publisher needs about one record. */
export interface PublicationInfo {
  readonly txId: string;
  readonly kind: RecordKind;
  readonly prevTxId: string | null;
  /** The record's chain (its own txId for a create or an independent record): settle's chain list. */
  readonly chainId: string;
  readonly state: PublicationState;
  /** The record's tenant (read in the same round trip; the webhooks watch step needs it). */
  readonly tenant: string | null;
  /** The raw transaction accepted at write time. */
  readonly rawTx: Uint8Array;
  /**
   * The bytes every (re-)broadcast of the record sends, the same each time: Extended Format (the
   * raw transaction with its stored extension), or `rawTx` itself for a record stored before EF.
   */
  readonly broadcastTx: Uint8Array;
}

interface Commands {
  acceptRoot(...keysAndArgv: (string | Buffer)[]): Promise<unknown>;
  acceptSuccessor(...keysAndArgv: (string | Buffer)[]): Promise<unknown>;
  navigate(k1: string, k2: string, txId: string, chainId: string, links: string): Promise<(string | number)[]>;
  settle(
    k1: string,
    k2: string,
    k3: string,
    txId: string,
    state: string,
    failure: string,
    at: string,
    maxSuccessors: string,
    chainId: string,
  ): Promise<unknown>;
  failPublished(k1: string, failure: string, at: string): Promise<unknown>;
  /** `revive-n.lua`: the number of keys first. */
  revive(numKeys: number, ...keysThenArgv: string[]): Promise<unknown>;
  /**
   * `meta-many-n.lua`: the number of keys first, then the record keys, '1' (append each record's
   * byte length) or '0', then the field names.
   */
  metaMany(numKeys: number, ...keysThenArgv: string[]): Promise<(string | number | null)[]>;
  /** `defer-n.lua`: the number of keys (one outbox per txId), the outboxes, the score, then the txIds. */
  defer(numKeys: number, ...keysThenArgv: string[]): Promise<number>;
  /** `bytes-many-n.lua`: the number of keys first, then the record keys. */
  bytesManyBuffer(numKeys: number, ...keys: string[]): Promise<(Buffer | null)[]>;
}

/** Bound of the calls of a script that answers "call again with these keys" (revive, navigate, settle). */
const MAX_KEY_ROUNDS = 4;

const META_FIELDS = [
  'family',
  'kind',
  'tenant',
  'chainId',
  'position',
  'prevTxId',
  'nextTxId',
  'contentType',
  'encoders',
  'acceptedAt',
  'state',
  'failure',
  'linkVout',
  'linkSats',
] as const;

/**
 * Redis storage of records. Every write is one Lua script: a record, its raw transaction and
 * its outbox entry are stored together or not at all; reads are one round trip each.
 *
 * Records live in partitions (`Partitions` of shared-redis): a root in the partition its writer
 * chose, every later version of a chain in its create's. Reads by txId find the partition
 * through the txId index (cached per process; not kept at all with one partition); an unknown
 * txId reads as absent.
 */
export class RecordStore {
  /** The records partitions (`next()`: round robin from a random start, for roots). */
  readonly partitions: Partitions;
  /** The txId → partition index. */
  readonly index: PartitionIndex;
  private readonly keySets = new Map<string, RecordsKeys>();
  private readonly cmd: Commands;
  private readonly isCluster: boolean;
  /** Where a new record's txId index entry is written (fixed per process; see {@link indexArgs}). */
  private readonly indexWrite: 'none' | 'in-script' | 'first';

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly options: RecordStoreOptions = {},
  ) {
    this.partitions = new Partitions(prefix, options.partitions ?? 1, undefined, options.layouts);
    this.index = options.index ?? new PartitionIndex(redis, prefix);
    this.isCluster = isClusterClient(redis);
    this.indexWrite = this.partitions.single ? 'none' : this.isCluster ? 'first' : 'in-script';
    // The accept scripts embed the funding pool's commit contract (local Lua functions).
    loadLuaCommands(redis, path.join(__dirname, 'lua'), { prelude: poolCommitLua() });
    this.cmd = redis as unknown as Commands;
  }

  /** The keys of partition `unit`. */
  keysOf(unit: string): RecordsKeys {
    let keys = this.keySets.get(unit);
    if (!keys) {
      keys = recordsKeys(this.prefix, unit);
      this.keySets.set(unit, keys);
    }
    return keys;
  }

  /** The partition holding `txId`, or null when no record has it (the index has no entry). */
  async partitionOf(txId: string): Promise<string | null> {
    if (this.partitions.single) return this.partitions.unit(0);
    return this.index.lookupOne(txId);
  }

  /** The partition of each txId (null where unknown), in order: one HMGET per index bucket. */
  async partitionsOf(txIds: readonly string[]): Promise<(string | null)[]> {
    if (this.partitions.single) return txIds.map(() => this.partitions.unit(0));
    return this.index.lookup(txIds);
  }

  /**
   * Where a new record's txId index entry is written, as the accept script's index key, field and
   * value (`''` field: the script writes none):
   * - one partition: nowhere (no index is kept);
   * - one Redis with several partitions: by the accept script itself, with the record and only
   *   if it is accepted (a script there may touch any key): one command per write, and no entry
   *   is ever left behind by a refusal;
   * - a Redis Cluster: the bucket is in another slot (maybe on another node), so
   *   {@link storeIndexFirst} stores the entry before the script runs (readers MUST find the
   *   entry no later than the record) and {@link afterAccept} drops it when the accept is
   *   refused; the script gets its record key again as a placeholder it never writes.
   */
  private indexArgs(txId: string, unit: string, recordKey: string): [key: string, field: Buffer | '', value: string] {
    if (this.indexWrite !== 'in-script') return [recordKey, '', ''];
    const [key, field, value] = this.index.entry(txId, unit);
    return [key, field, value];
  }

  /** On a Redis Cluster with several partitions: the index entry, stored before the accept script (see {@link indexArgs}). */
  private async storeIndexFirst(txId: string, unit: string): Promise<void> {
    if (this.indexWrite === 'first') await this.index.store(txId, unit);
  }

  /**
   * After an accept: an accepted record's partition is cached (the script or
   * {@link storeIndexFirst} stored its entry); a refused record's entry stored first is dropped
   * (best effort: a failure leaves an entry pointing at a partition without the record, which
   * reads as absent). A refusal stored nothing else either.
   */
  private async afterAccept(txId: string, unit: string, outcome: AcceptOutcome): Promise<AcceptOutcome> {
    if (this.indexWrite === 'none') return outcome;
    if (outcome === 'OK') this.index.remember(txId, unit);
    else if (this.indexWrite === 'first') await this.index.forget(txId).catch(() => undefined);
    return outcome;
  }

  /** The keys of the partition holding `txId`, or null when it is unknown. */
  async keysFor(txId: string): Promise<RecordsKeys | null> {
    const unit = await this.partitionOf(txId);
    return unit === null ? null : this.keysOf(unit);
  }

  /**
   * Answers one value per txId, in order, from `read` called once per partition (concurrently)
   * with its txIds and each one's partition keys (one command each: a partition's keys share a
   * slot); `absent` where the index knows no partition. `acrossSlots`: `read` sends one command
   * over any keys (MGET, a script over record keys), so on one Redis (no cluster: any keys go
   * together) it is called once for every txId found, whatever their partitions.
   */
  private async byPartition<T>(
    txIds: readonly string[],
    absent: T,
    read: (keys: readonly RecordsKeys[], ids: string[]) => Promise<readonly T[]>,
    acrossSlots = false,
  ): Promise<T[]> {
    const units = await this.partitionsOf(txIds);
    const together = acrossSlots && !this.isCluster;
    const groups = new Map<string, number[]>();
    units.forEach((unit, i) => {
      if (unit === null) return;
      const group = groups.get(together ? '' : unit);
      if (group) group.push(i);
      else groups.set(together ? '' : unit, [i]);
    });
    const out = txIds.map(() => absent);
    await Promise.all(
      [...groups.values()].map(async (positions) => {
        const values = await read(
          positions.map((i) => this.keysOf(units[i] as string)),
          positions.map((i) => txIds[i] as string),
        );
        if (values.length !== positions.length)
          throw new Error(`a partition read of ${positions.length} records answered ${values.length} values`);
        positions.forEach((p, j) => (out[p] = values[j] as T));
      }),
    );
    return out;
  }

  /** Each live partition's share of the deployment-wide outbox bound (0: none). */
  private pendingShare(maxPending: number | undefined): string {
    const max = maxPending ?? 0;
    return String(max > 0 ? Math.ceil(max / this.partitions.units.length) : 0);
  }

  /**
   * Stores an independent record or a linked create, adds it to the outbox and commits its
   * funding (`pool`) in the same script. MUST run before its publication is enqueued (the outbox
   * is what makes that safe).
   */
  async acceptRoot(record: NewRecord, pool: PoolCommitCall, opts: AcceptOptions = {}): Promise<AcceptOutcome> {
    checkPoolCall(pool);
    const family: RecordFamily = record.kind === 'independent' ? 'independent' : 'linked';
    // A root's chainId is its own txId and its position 0: not stored (see fieldsOf).
    const fields = this.fieldsOf(record, family);
    const keys = this.keysOf(pool.unit);
    const recordKey = keys.record(record.txId);
    const [indexKey, indexField, indexValue] = this.indexArgs(record.txId, pool.unit, recordKey);
    const [efArg, ...recordFields] = efPlacement(record, fields);
    await this.storeIndexFirst(record.txId, pool.unit);
    const reply = await this.cmd.acceptRoot(
      recordKey,
      keys.outbox,
      keys.chain(record.txId),
      ...pool.keys,
      keys.tx(record.txId),
      keys.ef(record.txId),
      indexKey,
      record.txId,
      String(record.acceptedAt.getTime()),
      record.kind === 'create' ? '1' : '0',
      this.pendingShare(opts.maxPending),
      ...pool.args,
      asBuffer(record.rawTx),
      efArg,
      indexField,
      indexValue,
      ...recordFields,
    );
    return this.afterAccept(record.txId, pool.unit, fromScriptReply('accept-root-15.lua', ACCEPT_REPLIES, reply));
  }

  /**
   * Stores a linked update/delete, reserving the previous record's link and committing its
   * funding (`pool`, in the chain's partition: `partitionOf(link.chainId)`) atomically (see the
   * script). One script call, except when the chain's cached
   * confirmed position puts it at the unconfirmed cap: then the script answers `CHECK_DEPTH` with
   * the chain's last `maxUnconfirmed` txIds, the proof store is read ({@link confirmedPrefix})
   * and the script is called again with the newest confirmed position (see accept-successor-17.lua).
   */
  async acceptSuccessor(
    record: NewRecord,
    link: SuccessorLink,
    pool: PoolCommitCall,
    opts: AcceptOptions = {},
  ): Promise<AcceptOutcome> {
    checkPoolCall(pool);
    const confirmedIndex = this.options.confirmedIndexKeyOf;
    const maxUnconfirmed = confirmedIndex === undefined ? 0 : (opts.maxUnconfirmed ?? 0);
    const [efArg, ...fields] = efPlacement(record, [
      ...this.fieldsOf(record, 'linked'),
      'chainId',
      link.chainId,
      'prevTxId',
      link.prevTxId,
    ]);
    const keys = this.keysOf(pool.unit);
    const recordKey = keys.record(record.txId);
    const [indexKey, indexField, indexValue] = this.indexArgs(record.txId, pool.unit, recordKey);
    const call = (minedPos: string) =>
      this.cmd.acceptSuccessor(
        recordKey,
        keys.outbox,
        keys.record(link.prevTxId),
        keys.chain(link.chainId),
        ...pool.keys,
        keys.tx(record.txId),
        keys.record(link.chainId),
        keys.ef(record.txId),
        indexKey,
        record.txId,
        String(record.acceptedAt.getTime()),
        link.chainId,
        link.tokenHash ?? '',
        link.callerTenant,
        this.pendingShare(opts.maxPending),
        ...pool.args,
        asBuffer(record.rawTx),
        String(maxUnconfirmed),
        efArg,
        minedPos,
        indexField,
        indexValue,
        ...fields,
      );
    await this.storeIndexFirst(record.txId, pool.unit);
    let reply = await call('');
    if (Array.isArray(reply) && reply[0] === 'CHECK_DEPTH' && confirmedIndex !== undefined) {
      const floor = Number(reply[1]);
      const window = (reply.slice(2) as unknown[]).map((txId) => String(txId));
      const confirmed = await confirmedPrefix(this.redis, confirmedIndex, window);
      // None of the last maxUnconfirmed versions is confirmed: what the second call would answer.
      if (confirmed === 0) return this.afterAccept(record.txId, pool.unit, 'CHAIN_DEPTH');
      reply = await call(String(floor + confirmed));
    }
    return this.afterAccept(record.txId, pool.unit, fromScriptReply('accept-successor-17.lua', ACCEPT_REPLIES, reply));
  }

  /** Metadata of a record (no bytes), or null. One round trip. */
  async meta(txId: string): Promise<RecordMeta | null> {
    const keys = await this.keysFor(txId);
    if (!keys) return null;
    const key = keys.record(txId);
    const [values, length] = await Promise.all([
      this.redis.hmget(key, ...META_FIELDS),
      this.redis.hstrlen(key, 'bytes'),
    ]);
    return toMeta(txId, values, length);
  }

  /** Metadata and the bytes on chain, or null. */
  async withBytes(txId: string): Promise<{ meta: RecordMeta; bytes: Buffer } | null> {
    const keys = await this.keysFor(txId);
    if (!keys) return null;
    const key = keys.record(txId);
    const [values, bytes] = await Promise.all([
      this.redis.hmget(key, ...META_FIELDS),
      this.redis.hgetBuffer(key, 'bytes'),
    ]);
    const meta = toMeta(txId, values, bytes?.length ?? 0);
    return meta ? { meta, bytes: bytes ?? Buffer.alloc(0) } : null;
  }

  /** Metadata and the raw transaction of a record (receipts), or null. One round trip. */
  async receiptMaterial(txId: string): Promise<{ meta: RecordMeta; rawTx: Uint8Array } | null> {
    const keys = await this.keysFor(txId);
    if (!keys) return null;
    const key = keys.record(txId);
    const [values, length, binary, legacy] = pipelineValues(
      await this.redis
        .pipeline()
        .hmget(key, ...META_FIELDS)
        .hstrlen(key, 'bytes')
        .getBuffer(keys.tx(txId))
        .hget(key, 'rawTx')
        .exec(),
    ) as [(string | null)[], number, Buffer | null, string | null];
    const meta = toMeta(txId, values, length);
    const rawTx = binary ?? fromLegacyHex(legacy);
    return meta && rawTx ? { meta, rawTx } : null;
  }

  /**
   * Raw transactions (hex) of many records (null where unknown), in order: one MGET of the
   * binary `tx` keys, then the hash's `rawTx` for records stored before that key existed.
   */
  async rawTxMany(txIds: readonly string[]): Promise<(Uint8Array | null)[]> {
    if (txIds.length === 0) return [];
    // One MGET per partition.
    const out = await this.byPartition<Uint8Array | null>(
      txIds,
      null,
      async (keys, ids) => (await this.redis.mgetBuffer(...ids.map((id, j) => keys[j]!.tx(id)))).map((b) => b ?? null),
      true,
    );
    // Only records stored before the tx key existed (or unknown ones) cost a second round trip.
    const missing = txIds.flatMap((txId, i) => (out[i] === null ? [i] : []));
    if (missing.length > 0) {
      const legacy = await this.byPartition<string | null>(
        missing.map((i) => txIds[i] as string),
        null,
        async (keys, ids) => {
          const pipeline = this.redis.pipeline();
          ids.forEach((id, j) => pipeline.hget(keys[j]!.record(id), 'rawTx'));
          return pipelineValues(await pipeline.exec()) as (string | null)[];
        },
      );
      missing.forEach((i, j) => (out[i] = fromLegacyHex(legacy[j] ?? null)));
    }
    return out;
  }

  /**
   * Metadata of many records (null where unknown), in order, in one command per slot (`meta-many-n.lua`;
   * one for all on one Redis, where keys of any slots go together): one reply for the whole batch costs the client a
   * quarter of the CPU a pipeline of two commands per record does (GraphQL's 1,000-record pages).
   */
  async metaMany(txIds: readonly string[]): Promise<(RecordMeta | null)[]> {
    if (txIds.length === 0) return [];
    const width = META_FIELDS.length + 1;
    return this.byPartition<RecordMeta | null>(
      txIds,
      null,
      async (keys, ids) => {
        const flat = await this.cmd.metaMany(
          ids.length,
          ...ids.map((id, j) => keys[j]!.record(id)),
          '1',
          ...META_FIELDS,
        );
        return ids.map((id, i) => {
          const at = i * width;
          const values = flat.slice(at, at + META_FIELDS.length) as (string | null)[];
          return toMeta(id, values, Number(flat[at + META_FIELDS.length] ?? 0));
        });
      },
      true,
    );
  }

  /**
   * The tenant of each txId (null where no record has it), in order, in one command per slot
   * (`meta-many-n.lua` asked for that one field): the owner of a proof in the chain's per-tenant
   * block index.
   */
  async tenantsOf(txIds: readonly string[]): Promise<(string | null)[]> {
    return this.fieldMany(txIds, 'tenant');
  }

  /** One field of many records (null where absent or empty), in order, in one command per slot. */
  private async fieldMany(txIds: readonly string[], field: string): Promise<(string | null)[]> {
    if (txIds.length === 0) return [];
    return this.byPartition<string | null>(
      txIds,
      null,
      async (keys, ids) =>
        (await this.cmd.metaMany(ids.length, ...ids.map((id, j) => keys[j]!.record(id)), '0', field)).map((v) =>
          typeof v === 'string' && v !== '' ? v : null,
        ),
      true,
    );
  }

  /** The bytes on chain of many records (null where unknown), in order, in one command per slot (`bytes-many-n.lua`). */
  async bytesMany(txIds: readonly string[]): Promise<(Buffer | null)[]> {
    if (txIds.length === 0) return [];
    return this.byPartition<Buffer | null>(
      txIds,
      null,
      (keys, ids) => this.cmd.bytesManyBuffer(ids.length, ...ids.map((id, j) => keys[j]!.record(id))),
      true,
    );
  }

  /**
   * Length of a chain and its txIds between LRANGE indexes `start` and `stop` (inclusive;
   * negative counts from the end), in one round trip.
   */
  async chainRange(chainId: string, start: number, stop: number): Promise<{ total: number; txIds: string[] }> {
    const keys = await this.keysFor(chainId);
    if (!keys) return { total: 0, txIds: [] };
    const key = keys.chain(chainId);
    const [total, txIds] = pipelineValues(await this.redis.pipeline().llen(key).lrange(key, start, stop).exec()) as [
      number,
      string[],
    ];
    return { total, txIds };
  }

  /**
   * Walks a chain from `txId` (start excluded): one round trip from a chain's create; from a later
   * version two, as the script learns the start's chain on the first (it may touch only the chain
   * list it is given, see navigate-2.lua).
   */
  async navigate(txId: string, links: number): Promise<NavigateOutcome> {
    const keys = await this.keysFor(txId);
    if (!keys) return { status: 'TX_NOT_FOUND' };
    let chainId = txId;
    for (let round = 0; round < MAX_KEY_ROUNDS; round++) {
      const out = await this.cmd.navigate(keys.record(txId), keys.chain(chainId), txId, chainId, String(links));
      if (out[0] === 'CHAIN') {
        chainId = String(out[1]);
        continue;
      }
      const status = fromScriptReply('navigate-2.lua', NAVIGATE_REPLIES, out[0]);
      if (status !== 'OK') return { status };
      return { status: 'OK', endOfLinks: Number(out[1]) === 1, txIds: out.slice(2).map(String) };
    }
    throw new Error(`navigate-2.lua kept naming another chain for ${txId}`);
  }

  /** The whole chain of `chainId`, in order (tests, GraphQL traversal). */
  async chain(chainId: string): Promise<string[]> {
    const keys = await this.keysFor(chainId);
    return keys ? this.redis.lrange(keys.chain(chainId), 0, -1) : [];
  }

  async publication(txId: string): Promise<PublicationInfo | null> {
    const keys = await this.keysFor(txId);
    if (!keys) return null;
    const key = keys.record(txId);
    const [[kind, prevTxId, chainId, state, legacy, tenant], binary, inHash, inKey] = pipelineValues(
      await this.redis
        .pipeline()
        .hmget(key, 'kind', 'prevTxId', 'chainId', 'state', 'rawTx', 'tenant')
        .getBuffer(keys.tx(txId))
        .hgetBuffer(key, 'ef')
        .getBuffer(keys.ef(txId))
        .exec(),
    ) as [(string | null)[], Buffer | null, Buffer | null, Buffer | null];
    const extension = inHash ?? inKey;
    const rawTx = binary ?? fromLegacyHex(legacy ?? null);
    if (!kind || !state || !rawTx) return null;
    const broadcastTx = extension ? withExtension(rawTx, extension) : rawTx;
    return {
      txId,
      kind: kind as RecordKind,
      prevTxId: prevTxId || null,
      chainId: chainId || txId,
      state: state as PublicationState,
      tenant: tenant || null,
      rawTx,
      broadcastTx,
    };
  }

  async state(txId: string): Promise<PublicationState | null> {
    const keys = await this.keysFor(txId);
    return keys ? ((await this.redis.hget(keys.record(txId), 'state')) as PublicationState | null) : null;
  }

  /**
   * Settles a record's publication (`settle-3.lua`): published, or failed for good when a
   * `failure` is given; removes it from the outbox. Idempotent: `changed` false when it was
   * already settled or is unknown. `successors`: when this call settled the record, its
   * successors still pending, in chain order (up to `maxSuccessors`): their own publishers may have
   * seen this record unpublished and left them waiting for it (published: publish them next;
   * failed: they can never be published, fail them). `chainId`: the record's chain
   * ({@link PublicationInfo.chainId}; default its own txId, right for a create or an independent
   * record): the script reads that chain's list for the successors, and when the record has
   * successors in another chain it answers so and is called again (one more round trip).
   */
  async settle(
    txId: string,
    at: Date,
    failure?: string,
    maxSuccessors = 50,
    chainId = txId,
  ): Promise<{ changed: boolean; successors: string[] }> {
    const keys = await this.keysFor(txId);
    if (!keys) return { changed: false, successors: [] };
    let chain = chainId;
    for (let round = 0; round < MAX_KEY_ROUNDS; round++) {
      const reply = await this.cmd.settle(
        keys.record(txId),
        keys.outbox,
        keys.chain(chain),
        txId,
        failure === undefined ? 'published' : 'failed',
        failure ?? '',
        String(at.getTime()),
        String(maxSuccessors),
        chain,
      );
      const [changed, ...successors] = Array.isArray(reply) ? (reply as unknown[]) : [reply];
      if (changed === 'CHAIN') {
        chain = String(successors[0]);
        continue;
      }
      return {
        changed: fromScriptReply('settle-3.lua', SETTLE_REPLIES, changed),
        successors: successors.filter((t): t is string => typeof t === 'string'),
      };
    }
    throw new Error(`settle-3.lua kept naming another chain for ${txId}`);
  }

  /**
   * Counts one more time ARC could not find a parent of `txId` while that parent was still ours
   * and in flight (460); returns the count, which bounds the waits. A small integer field: the
   * hash stays a listpack.
   */
  async countParentWait(txId: string): Promise<number> {
    const keys = await this.keysFor(txId);
    // An unknown record: nothing to count, and no wait to bound.
    return keys ? this.redis.hincrby(keys.record(txId), 'parentWaits', 1) : 0;
  }

  /**
   * A published record whose transaction the chain refused later (while waiting for its proof):
   * marks it failed (`fail-published-1.lua`). True when the state changed.
   */
  async failPublished(txId: string, at: Date, failure: string): Promise<boolean> {
    const keys = await this.keysFor(txId);
    if (!keys) return false;
    return Number(await this.cmd.failPublished(keys.record(txId), failure, String(at.getTime()))) === 1;
  }

  /**
   * One ZSCAN page of the outbox: each entry with its due time (acceptance time, or later when a
   * batch job carries it). Start with cursor '0'; the scan is complete when the returned cursor is
   * '0'. ZSCAN returns every entry present for the whole scan at least once (some maybe twice),
   * whatever settles meanwhile, which paging by rank or score does not.
   */
  async scanOutbox(
    cursor: string,
    count = 1000,
  ): Promise<{ cursor: string; entries: { txId: string; dueMs: number }[] }> {
    // The cursor walks the live partitions in order: `<partition>:<ZSCAN cursor>` ('0' = the start
    // of the first one and the end of the last).
    const colon = cursor.indexOf(':');
    let partition = colon < 0 ? 0 : Number(cursor.slice(0, colon));
    const zcursor = colon < 0 ? cursor : cursor.slice(colon + 1);
    if (!Number.isSafeInteger(partition) || partition < 0 || partition >= this.partitions.units.length)
      throw new RangeError(`not an outbox cursor: ${cursor}`);
    const page = await this.scanPartitionOutbox(partition, zcursor, count);
    if (page.cursor !== '0') return { cursor: `${partition}:${page.cursor}`, entries: page.entries };
    partition += 1;
    return { cursor: partition < this.partitions.units.length ? `${partition}:0` : '0', entries: page.entries };
  }

  /** One ZSCAN page of live partition `partition`'s outbox (its own cursor: '0' to start and at the end). */
  async scanPartitionOutbox(
    partition: number,
    cursor: string,
    count = 1000,
  ): Promise<{ cursor: string; entries: { txId: string; dueMs: number }[] }> {
    const [next, flat] = await this.redis.zscan(
      this.keysOf(this.partitions.unit(partition)).outbox,
      cursor,
      'COUNT',
      count,
    );
    const entries: { txId: string; dueMs: number }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) entries.push({ txId: flat[i] as string, dueMs: Number(flat[i + 1]) });
    return { cursor: next, entries };
  }

  /**
   * A failed record whose transaction the chain shows after all (seen or mined): its failure is
   * cleared (`revive-n.lua`), and each successor that failed only because of it (its failure led
   * by `failurePrefix`) goes back to pending and into the outbox, due now. `changed` false when
   * the record was not failed. A record with successors takes two or three calls: the script
   * names the chain and its successors, which it may only touch when given their keys.
   */
  async revive(
    txId: string,
    at: Date,
    failurePrefix: string,
    maxSuccessors = 1000,
  ): Promise<{ changed: boolean; successors: string[] }> {
    const partition = await this.keysFor(txId);
    if (!partition) return { changed: false, successors: [] };
    let chainId = txId;
    let successors: string[] = [];
    for (let round = 0; round < MAX_KEY_ROUNDS; round++) {
      const keys = [
        partition.record(txId),
        partition.outbox,
        partition.chain(chainId),
        ...successors.map((s) => partition.record(s)),
      ];
      const reply = (await this.cmd.revive(
        keys.length,
        ...keys,
        txId,
        String(at.getTime()),
        String(at.getTime()),
        failurePrefix,
        String(maxSuccessors),
        chainId,
        ...successors,
      )) as unknown[];
      const [changed, ...rest] = reply;
      if (changed === 'RETRY') {
        [chainId, ...successors] = rest.map(String) as [string, ...string[]];
        continue;
      }
      return { changed: Number(changed) === 1, successors: rest.map(String) };
    }
    throw new Error(`revive-n.lua kept asking for other successors of ${txId}`);
  }

  /**
   * {@link revive} for the failed records among `txIds` (a callback batch, a confirmation pass):
   * their states are read in one command per partition, and only a failed record costs a revive call.
   * @returns the records revived, each with the successors put back.
   */
  async reviveMany(
    txIds: readonly string[],
    at: Date,
    failurePrefix: string,
    maxSuccessors = 1000,
  ): Promise<{ txId: string; successors: string[] }[]> {
    const states = await this.fieldMany(txIds, 'state');
    const failed = txIds.filter((_, i) => states[i] === 'failed');
    const revived = await Promise.all(
      failed.map(async (txId) => ({ txId, ...(await this.revive(txId, at, failurePrefix, maxSuccessors)) })),
    );
    return revived.filter((r) => r.changed).map(({ txId, successors }) => ({ txId, successors }));
  }

  /**
   * Outbox entries accepted at or before `acceptedBefore`, oldest first within each partition,
   * up to `limit` per partition (one ZRANGEBYSCORE each).
   */
  async dueOutbox(acceptedBefore: Date, limit = 500): Promise<string[]> {
    const due = await Promise.all(
      this.partitions.units.map((unit) =>
        this.redis.zrangebyscore(this.keysOf(unit).outbox, '-inf', acceptedBefore.getTime(), 'LIMIT', 0, limit),
      ),
    );
    return due.flat();
  }

  /**
   * Moves outbox entries' due time to `until` (only entries still there: a record settled
   * meanwhile stays settled). The API calls it once a batch job carries them, so the outbox
   * sweeper, which re-enqueues entries older than its threshold, leaves a queued backlog alone.
   */
  async deferSweep(txIds: readonly string[], until: Date): Promise<void> {
    if (txIds.length === 0) return;
    const score = String(until.getTime());
    // One ZADD when every txId is in one outbox (one partition, or one slot on a cluster); on one
    // Redis, one defer-n.lua call for several partitions' outboxes.
    await this.byPartition<number>(
      txIds,
      0,
      async (keys, ids) => {
        const outbox = keys[0]!.outbox;
        if (keys.every((k) => k.outbox === outbox))
          await this.redis.zadd(outbox, 'XX', ...ids.flatMap((txId) => [score, txId]));
        else await this.cmd.defer(ids.length, ...keys.map((k) => k.outbox), score, ...ids);
        return ids.map(() => 0);
      },
      true,
    );
  }

  /** Records waiting for publication: the outboxes summed (one ZCARD per partition; metrics, not writes). */
  async outboxSize(): Promise<number> {
    const sizes = await this.outboxSizes();
    return sizes.reduce((a, b) => a + b, 0);
  }

  /** Each live partition's outbox size, in partition order (`partitions.units`). */
  async outboxSizes(): Promise<number[]> {
    return Promise.all(this.partitions.units.map((unit) => this.redis.zcard(this.keysOf(unit).outbox)));
  }

  /**
   * The record hash's fields. Redis keeps a small hash as one listpack, so every byte counts per
   * record (docs/performance.md, "Memory"): a value equal to what a reader assumes when the field is absent is
   * not stored: `contentType` when it is the one its encoders give (`encodedContentType`), and for roots `chainId` (= txId) and
   * `position` (0); `failure` is written only when there is one. {@link toMeta} and the scripts
   * (accept-successor, navigate) apply the same defaults.
   */
  private fieldsOf(record: NewRecord, family: RecordFamily): (string | Buffer)[] {
    // An independent record stores no family: its kind says it (toMeta, navigate-2.lua).
    const fields: (string | Buffer)[] = [
      ...(family === 'independent' ? [] : ['family', family]),
      'kind',
      record.kind,
      'tenant',
      record.tenant,
      'encoders',
      JSON.stringify(record.encoders),
      'bytes',
      Buffer.from(record.bytes.buffer, record.bytes.byteOffset, record.bytes.byteLength),
      'acceptedAt',
      String(record.acceptedAt.getTime()),
      'state',
      'pending',
    ];
    if (record.contentType !== encodedContentType(record.encoders)) fields.push('contentType', record.contentType);
    if (record.link) fields.push('linkVout', String(record.link.vout), 'linkSats', String(record.link.satoshis));
    if (record.tokenHash) fields.push('tokenHash', record.tokenHash);
    return fields;
  }
}

/**
 * The longest EF extension kept in the record hash (field `ef`): Redis's default
 * `hash-max-listpack-value`, so the hash stays a listpack. An independent record or a linked
 * create spends one input (34 B); a linked update spends two (68 B) and keeps its own `ef` key.
 */
const EF_IN_HASH_MAX = 64;

/**
 * The accept script's EF argument (what it stores under the `ef` key; '' for none) and the hash
 * fields with the extension added when it fits the hash ({@link EF_IN_HASH_MAX}).
 */
function efPlacement(record: NewRecord, fields: (string | Buffer)[]): [Buffer | '', ...(string | Buffer)[]] {
  if (!record.ef) return ['', ...fields];
  const extension = Buffer.from(extensionOf(record.ef));
  if (extension.length <= EF_IN_HASH_MAX) return ['', ...fields, 'ef', extension];
  return [extension, ...fields];
}

/**
 * A stored time as ISO 8601: record hashes keep times (`acceptedAt`, `settledAt`) as milliseconds
 * since the epoch, which a listpack stores as an 8-byte integer rather than 24 characters; hashes
 * written before keep the ISO string, returned as it is.
 */
function isoTime(stored: string | null | undefined): string {
  if (!stored) return '';
  return /^[0-9]+$/.test(stored) ? new Date(Number(stored)).toISOString() : stored;
}

/** The script's key and argument positions are fixed: a pool step of another shape would shift every field. */
function checkPoolCall(pool: PoolCommitCall): void {
  if (pool.keys.length !== 9 || pool.args.length !== 7)
    throw new Error(`pool commit call needs 9 keys and 7 args, got ${pool.keys.length} and ${pool.args.length}`);
}

/** A record accepted before the binary `tx` key existed keeps its transaction as hex in its hash. */
function fromLegacyHex(hex: string | null): Uint8Array | null {
  return hex ? Buffer.from(hex, 'hex') : null;
}

/** The bytes as a Buffer ioredis sends as is (a view, no copy). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function pipelineValues(replies: [Error | null, unknown][] | null): unknown[] {
  if (!replies) throw new Error('pipeline aborted');
  return replies.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}

function toMeta(txId: string, v: (string | null)[], byteLength: number): RecordMeta | null {
  const [
    family,
    kind,
    tenant,
    chainId,
    position,
    prevTxId,
    nextTxId,
    contentType,
    encodersJson,
    acceptedAt,
    state,
    failure,
    linkVout,
    linkSats,
  ] = v;
  if (!kind) return null;
  const recordFamily: RecordFamily | null = family
    ? (family as RecordFamily)
    : kind === 'independent'
      ? 'independent'
      : null;
  if (!recordFamily) return null;
  const encoders = encodersJson ? (JSON.parse(encodersJson) as EncoderName[]) : [];
  return {
    txId,
    family: recordFamily,
    kind: kind as RecordKind,
    tenant: tenant ?? '',
    chainId: chainId ?? txId,
    position: Number(position ?? 0),
    prevTxId: prevTxId || null,
    nextTxId: nextTxId || null,
    contentType: contentType ?? encodedContentType(encoders),
    encoders,
    acceptedAt: isoTime(acceptedAt),
    state: (state ?? 'pending') as PublicationState,
    failure: failure || null,
    linkVout: linkVout ? Number(linkVout) : null,
    linkSatoshis: linkSats ? Number(linkSats) : null,
    byteLength,
  };
}

/**
 * How many of a chain's consecutive versions (`txIds`, oldest first) have a stored proof in the
 * proof store (`keyOf`: the hash holding a txId's proof). A confirmed version's predecessors are
 * confirmed too (each spends the one before it), so the confirmed ones are a prefix: a binary
 * search finds its length with about log2(n) + 1 HEXISTS, one at a time (the txIds' proofs live
 * in different shards, so no one command reads them all). Only an accept at the cap asks.
 */
async function confirmedPrefix(
  redis: RedisClient,
  keyOf: (txId: string) => string,
  txIds: readonly string[],
): Promise<number> {
  let lo = 0;
  let hi = txIds.length;
  while (lo < hi) {
    const mid = Math.floor((lo + hi + 1) / 2);
    const txId = txIds[mid - 1] as string;
    if ((await redis.hexists(keyOf(txId), Buffer.from(txId, 'hex'))) === 1) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
