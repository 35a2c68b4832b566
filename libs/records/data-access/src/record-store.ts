import path from 'node:path';
import type { Redis } from 'ioredis';
import { loadLuaCommands } from '@proofline/shared-redis';
import type { EncoderName, PublicationState, RecordFamily, RecordKind, RecordMeta } from '@proofline/records-domain';
import { recordsKeys } from './keys';
import type { RecordsKeys } from './keys';

/** A record about to be accepted, with its signed transaction. */
export interface NewRecord {
  readonly txId: string;
  readonly kind: RecordKind;
  readonly tenant: string;
  readonly contentType: string;
  readonly encoders: readonly EncoderName[];
  readonly bytes: Uint8Array;
  readonly rawTx: string;
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

export type AcceptOutcome = 'OK' | 'EXISTS' | 'TX_NOT_FOUND' | 'WRONG_FAMILY' | 'TOKEN_INVALID' | 'FORBIDDEN' | 'NOT_END' | 'CHAIN_MISMATCH' | 'BACKPRESSURE';

/** Write-path policy: `maxPending` accepted records may wait for publication (0 = no limit). */
export interface AcceptOptions {
  readonly maxPending?: number;
}

export type NavigateOutcome =
  | { readonly status: 'OK'; readonly txIds: string[]; readonly endOfLinks: boolean }
  | { readonly status: 'TX_NOT_FOUND' | 'WRONG_FAMILY' };

/** What the publisher needs about one record. */
export interface PublicationInfo {
  readonly txId: string;
  readonly kind: RecordKind;
  readonly prevTxId: string | null;
  readonly state: PublicationState;
  readonly rawTx: string;
}

interface Commands {
  acceptRecord(k1: string, k2: string, k3: string, ...argv: (string | Buffer)[]): Promise<string>;
  acceptSuccessor(k1: string, k2: string, k3: string, k4: string, ...argv: (string | Buffer)[]): Promise<string>;
  navigate(k1: string, chainPrefix: string, links: string): Promise<(string | number)[]>;
  markPublished(k1: string, k2: string, txId: string, state: string, failure: string, at: string): Promise<number>;
}

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
 */
export class RecordStore {
  private readonly keys: RecordsKeys;
  private readonly cmd: Commands;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = recordsKeys(prefix);
    loadLuaCommands(redis, path.join(__dirname, 'lua'));
    this.cmd = redis as unknown as Commands;
  }

  /**
   * Stores an independent record or a linked create and adds it to the outbox.
   * MUST run before its publication is enqueued (the outbox is what makes that safe).
   */
  async acceptRoot(record: NewRecord, opts: AcceptOptions = {}): Promise<AcceptOutcome> {
    const family: RecordFamily = record.kind === 'independent' ? 'independent' : 'linked';
    const fields = [...this.fieldsOf(record, family), 'chainId', record.txId, 'position', '0'];
    return (await this.cmd.acceptRecord(
      this.keys.record(record.txId),
      this.keys.outbox,
      this.keys.chain(record.txId),
      record.txId,
      String(record.acceptedAt.getTime()),
      record.kind === 'create' ? '1' : '0',
      String(opts.maxPending ?? 0),
      ...fields,
    )) as AcceptOutcome;
  }

  /** Stores a linked update/delete, reserving the previous record's link atomically (see the script). */
  async acceptSuccessor(record: NewRecord, link: SuccessorLink, opts: AcceptOptions = {}): Promise<AcceptOutcome> {
    const fields = [...this.fieldsOf(record, 'linked'), 'chainId', link.chainId, 'prevTxId', link.prevTxId];
    return (await this.cmd.acceptSuccessor(
      this.keys.record(record.txId),
      this.keys.outbox,
      this.keys.record(link.prevTxId),
      this.keys.chain(link.chainId),
      record.txId,
      String(record.acceptedAt.getTime()),
      link.chainId,
      link.tokenHash ?? '',
      link.callerTenant,
      String(opts.maxPending ?? 0),
      ...fields,
    )) as AcceptOutcome;
  }

  /** Metadata of a record (no bytes), or null. One round trip. */
  async meta(txId: string): Promise<RecordMeta | null> {
    const key = this.keys.record(txId);
    const [values, length] = await Promise.all([this.redis.hmget(key, ...META_FIELDS), this.redis.hstrlen(key, 'bytes')]);
    return toMeta(txId, values, length);
  }

  /** Metadata and the bytes on chain, or null. */
  async withBytes(txId: string): Promise<{ meta: RecordMeta; bytes: Buffer } | null> {
    const key = this.keys.record(txId);
    const [values, bytes] = await Promise.all([this.redis.hmget(key, ...META_FIELDS), this.redis.hgetBuffer(key, 'bytes')]);
    const meta = toMeta(txId, values, bytes?.length ?? 0);
    return meta ? { meta, bytes: bytes ?? Buffer.alloc(0) } : null;
  }

  /** Metadata of many records (null where unknown), in order, in one round trip (a pipeline). */
  async metaMany(txIds: readonly string[]): Promise<(RecordMeta | null)[]> {
    if (txIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const txId of txIds) {
      const key = this.keys.record(txId);
      pipeline.hmget(key, ...META_FIELDS).hstrlen(key, 'bytes');
    }
    const replies = pipelineValues(await pipeline.exec());
    return txIds.map((txId, i) => toMeta(txId, replies[2 * i] as (string | null)[], Number(replies[2 * i + 1] ?? 0)));
  }

  /** The bytes on chain of many records (null where unknown), in order, in one round trip. */
  async bytesMany(txIds: readonly string[]): Promise<(Buffer | null)[]> {
    if (txIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const txId of txIds) pipeline.hgetBuffer(this.keys.record(txId), 'bytes');
    return pipelineValues(await pipeline.exec()) as (Buffer | null)[];
  }

  /**
   * Length of a chain and its txIds between LRANGE indexes `start` and `stop` (inclusive;
   * negative counts from the end), in one round trip.
   */
  async chainRange(chainId: string, start: number, stop: number): Promise<{ total: number; txIds: string[] }> {
    const key = this.keys.chain(chainId);
    const [total, txIds] = pipelineValues(await this.redis.pipeline().llen(key).lrange(key, start, stop).exec()) as [number, string[]];
    return { total, txIds };
  }

  /** Walks a chain from `txId` (start excluded) in one round trip. */
  async navigate(txId: string, links: number): Promise<NavigateOutcome> {
    const out = await this.cmd.navigate(this.keys.record(txId), this.keys.chainPrefix, String(links));
    const status = String(out[0]);
    if (status !== 'OK') return { status: status as 'TX_NOT_FOUND' | 'WRONG_FAMILY' };
    return { status: 'OK', endOfLinks: Number(out[1]) === 1, txIds: out.slice(2).map(String) };
  }

  /** The whole chain of `chainId`, in order (tests, GraphQL traversal). */
  async chain(chainId: string): Promise<string[]> {
    return this.redis.lrange(this.keys.chain(chainId), 0, -1);
  }

  async publication(txId: string): Promise<PublicationInfo | null> {
    const [kind, prevTxId, state, rawTx] = await this.redis.hmget(this.keys.record(txId), 'kind', 'prevTxId', 'state', 'rawTx');
    if (!kind || !state || !rawTx) return null;
    return { txId, kind: kind as RecordKind, prevTxId: prevTxId || null, state: state as PublicationState, rawTx };
  }

  async state(txId: string): Promise<PublicationState | null> {
    return (await this.redis.hget(this.keys.record(txId), 'state')) as PublicationState | null;
  }

  /** Marks a record published (or failed for good) and removes it from the outbox. Idempotent. */
  async settle(txId: string, at: Date, failure?: string): Promise<boolean> {
    const changed = await this.cmd.markPublished(
      this.keys.record(txId),
      this.keys.outbox,
      txId,
      failure === undefined ? 'published' : 'failed',
      failure ?? '',
      at.toISOString(),
    );
    return changed === 1;
  }

  /** Outbox entries accepted at or before `acceptedBefore`, oldest first. */
  async dueOutbox(acceptedBefore: Date, limit = 500): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.outbox, '-inf', acceptedBefore.getTime(), 'LIMIT', 0, limit);
  }

  async outboxSize(): Promise<number> {
    return this.redis.zcard(this.keys.outbox);
  }

  private fieldsOf(record: NewRecord, family: RecordFamily): (string | Buffer)[] {
    const fields: (string | Buffer)[] = [
      'family',
      family,
      'kind',
      record.kind,
      'tenant',
      record.tenant,
      'contentType',
      record.contentType,
      'encoders',
      JSON.stringify(record.encoders),
      'bytes',
      Buffer.from(record.bytes.buffer, record.bytes.byteOffset, record.bytes.byteLength),
      'rawTx',
      record.rawTx,
      'acceptedAt',
      record.acceptedAt.toISOString(),
      'state',
      'pending',
    ];
    if (record.link) fields.push('linkVout', String(record.link.vout), 'linkSats', String(record.link.satoshis));
    if (record.tokenHash) fields.push('tokenHash', record.tokenHash);
    return fields;
  }
}

function pipelineValues(replies: [Error | null, unknown][] | null): unknown[] {
  if (!replies) throw new Error('pipeline aborted');
  return replies.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}

function toMeta(txId: string, v: (string | null)[], byteLength: number): RecordMeta | null {
  const [family, kind, tenant, chainId, position, prevTxId, nextTxId, contentType, encoders, acceptedAt, state, failure, linkVout, linkSats] = v;
  if (!family || !kind) return null;
  return {
    txId,
    family: family as RecordFamily,
    kind: kind as RecordKind,
    tenant: tenant ?? '',
    chainId: chainId ?? txId,
    position: Number(position ?? 0),
    prevTxId: prevTxId || null,
    nextTxId: nextTxId || null,
    contentType: contentType ?? 'application/octet-stream',
    encoders: encoders ? (JSON.parse(encoders) as EncoderName[]) : [],
    acceptedAt: acceptedAt ?? '',
    state: (state ?? 'pending') as PublicationState,
    failure: failure || null,
    linkVout: linkVout ? Number(linkVout) : null,
    linkSatoshis: linkSats ? Number(linkSats) : null,
    byteLength,
  };
}
