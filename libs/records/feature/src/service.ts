import type { Clock, Config, FeatureName } from '@proofline/shared-config';
import { AppError, badRequest, forbidden, notFound, unavailable } from '@proofline/shared-errors';
import type { Logger } from '@proofline/shared-logger';
import type { BuiltTransaction, ChainReader, TransactionBuilder, TscMerkleProof } from '@proofline/chain-domain';
import {
  applyEncoding,
  generateUpdateToken,
  hashUpdateToken,
  invalidUpdateToken,
  isUpdatable,
  parseEncodeParam,
  parseLinks,
  parseTxId,
  updateTokenHashOf,
} from '@proofline/records-domain';
import type { EncodeStep, EncodingEntry, PublicationState, RecordFamily, RecordKind, RecordMeta } from '@proofline/records-domain';
import type { AcceptOutcome, NewRecord, RecordStore } from '@proofline/records-data-access';

/** Who is calling (from the auth middleware). */
export interface Caller {
  readonly tenant: string;
}

/** Enqueues the publication of an accepted record (BullMQ in the apps, jobId = txId). */
export interface PublishQueue {
  enqueue(txId: string): Promise<void>;
}

export interface Confirmation {
  readonly confirmedBlocks: number;
  readonly blockHash: string;
  readonly blockTimestamp: string;
  readonly merkleProof: TscMerkleProof;
}

export interface LinkedWriteResult {
  readonly txId: string;
  readonly updateToken: string;
  readonly encoding: EncodingEntry[];
}
export interface IndependentWriteResult {
  readonly txId: string;
  readonly encoding: EncodingEntry[];
}
export interface StatusResult {
  readonly confirmation: Confirmation | null;
  /** Linked records only. */
  readonly updatable?: boolean;
  /** Where publication stands: `pending` (accepted, not yet in the mempool), `published`, `failed`. */
  readonly publication: PublicationState;
}
export interface MatchResult {
  readonly match: boolean;
  readonly confirmation: Confirmation | null;
}
export interface NavigateResult {
  readonly txIds: string[];
  readonly endOfLinks: boolean;
  readonly maxLinksRequestable: number;
}
export interface ContentResult {
  readonly bytes: Buffer;
  readonly contentType: string;
  readonly txId: string;
}

/** {@link RecordsService.chainPage} input: positions are 0-based, bounds exclusive. */
export interface ChainPageRequest {
  readonly first?: number;
  readonly after?: number;
  readonly last?: number;
  readonly before?: number;
}
export interface ChainPage {
  /** Records in the whole chain. */
  readonly total: number;
  /** Position of `txIds[0]`. */
  readonly start: number;
  readonly txIds: string[];
}

export interface RecordsServiceDeps {
  readonly config: Pick<Config, 'features' | 'encoders' | 'maxLinks' | 'maxRecordBytes' | 'maxPendingPublications'>;
  readonly clock: Clock;
  readonly store: RecordStore;
  readonly builder: TransactionBuilder;
  readonly reader: ChainReader;
  readonly queue: PublishQueue;
  readonly logger?: Logger;
}

/** Raw inputs as they arrive from REST or GraphQL (validated here, once). */
export interface WriteInput {
  readonly body: Uint8Array | undefined;
  readonly encode: string | undefined;
}

/**
 * The records use cases, shared by REST and GraphQL. Every method validates its raw inputs and
 * throws {@link AppError} for anything that is not an expected outcome.
 */
export class RecordsService {
  constructor(private readonly deps: RecordsServiceDeps) {}

  /** Back-pressure: how many accepted records may wait for publication. */
  private get acceptOptions(): { maxPending: number } {
    return { maxPending: this.deps.config.maxPendingPublications };
  }

  get maxLinks(): number {
    return this.deps.config.maxLinks;
  }

  /** POST /records. */
  async writeIndependent(caller: Caller, input: WriteInput): Promise<IndependentWriteResult> {
    const steps = this.encodeSteps(input.encode);
    const body = this.requireBody(input.body);
    const encoded = applyEncoding(steps, body);
    const tx = this.deps.builder.build({ kind: 'independent', data: encoded.bytes, contentType: encoded.contentType });
    const record = this.newRecord(caller, 'independent', tx, encoded.contentType, steps, encoded.bytes, null);
    await this.accepted(await this.deps.store.acceptRoot(record, this.acceptOptions), tx.txId);
    return { txId: tx.txId, encoding: encoded.encoding };
  }

  /** POST /linkedrecords. */
  async createLinked(caller: Caller, input: WriteInput): Promise<LinkedWriteResult> {
    this.requireFeature('linked');
    const steps = this.encodeSteps(input.encode);
    const body = this.requireBody(input.body);
    const encoded = applyEncoding(steps, body);
    const tx = this.deps.builder.build({ kind: 'create', data: encoded.bytes, contentType: encoded.contentType });
    const updateToken = generateUpdateToken();
    const record = this.newRecord(caller, 'create', tx, encoded.contentType, steps, encoded.bytes, hashUpdateToken(updateToken));
    await this.accepted(await this.deps.store.acceptRoot(record, this.acceptOptions), tx.txId);
    return { txId: tx.txId, updateToken, encoding: encoded.encoding };
  }

  /** POST /linkedrecords/:txId/update. */
  async updateLinked(caller: Caller, prevTxIdRaw: unknown, input: WriteInput & { readonly updateToken: string | undefined }): Promise<LinkedWriteResult> {
    this.requireFeature('linked');
    const prevTxId = parseTxId(prevTxIdRaw);
    const tokenHash = input.updateToken === undefined ? null : updateTokenHashOf(input.updateToken);
    const steps = this.encodeSteps(input.encode);
    const body = this.requireBody(input.body);
    const prev = await this.linkablePrevious(prevTxId);
    const encoded = applyEncoding(steps, body);
    const tx = this.deps.builder.build({
      kind: 'update',
      data: encoded.bytes,
      contentType: encoded.contentType,
      spends: { txId: prevTxId, vout: prev.linkVout ?? 0, satoshis: prev.linkSatoshis ?? 0 },
    });
    const updateToken = generateUpdateToken();
    const record = this.newRecord(caller, 'update', tx, encoded.contentType, steps, encoded.bytes, hashUpdateToken(updateToken));
    const link = { prevTxId, chainId: prev.chainId, tokenHash, callerTenant: caller.tenant };
    await this.accepted(await this.deps.store.acceptSuccessor(record, link, this.acceptOptions), tx.txId, prevTxId);
    return { txId: tx.txId, updateToken, encoding: encoded.encoding };
  }

  /** POST /linkedrecords/:txId/delete. */
  async deleteLinked(caller: Caller, prevTxIdRaw: unknown, input: { readonly updateToken: string | undefined }): Promise<{ txId: string }> {
    this.requireFeature('linked');
    const prevTxId = parseTxId(prevTxIdRaw);
    const tokenHash = input.updateToken === undefined ? null : updateTokenHashOf(input.updateToken);
    const prev = await this.linkablePrevious(prevTxId);
    const tx = this.deps.builder.build({
      kind: 'delete',
      spends: { txId: prevTxId, vout: prev.linkVout ?? 0, satoshis: prev.linkSatoshis ?? 0 },
    });
    const record = this.newRecord(caller, 'delete', tx, 'application/octet-stream', [], new Uint8Array(0), null);
    const link = { prevTxId, chainId: prev.chainId, tokenHash, callerTenant: caller.tenant };
    await this.accepted(await this.deps.store.acceptSuccessor(record, link, this.acceptOptions), tx.txId, prevTxId);
    return { txId: tx.txId };
  }

  /** GET …/status. */
  async status(family: RecordFamily, txIdRaw: unknown): Promise<StatusResult> {
    if (family === 'linked') this.requireFeature('linked');
    const txId = parseTxId(txIdRaw);
    const [meta, confirmation] = await Promise.all([this.deps.store.meta(txId), this.confirmation(txId)]);
    const found = this.requireFamily(meta, family, txId);
    return family === 'linked'
      ? { confirmation, updatable: isUpdatable(found), publication: found.state }
      : { confirmation, publication: found.state };
  }

  /** GET/HEAD …/content: the exact bytes on chain. */
  async content(family: RecordFamily, txIdRaw: unknown): Promise<ContentResult> {
    if (family === 'linked') this.requireFeature('linked');
    const txId = parseTxId(txIdRaw);
    const found = await this.deps.store.withBytes(txId);
    const meta = this.requireFamily(found?.meta ?? null, family, txId);
    return { txId, bytes: found?.bytes ?? Buffer.alloc(0), contentType: meta.contentType };
  }

  /**
   * POST …/match. `encode` defaults to the record's own encoder chain (without salts). For a
   * linked update/delete `prevTxId` is required and must be the record it links to; for a create
   * it must be absent. A delete carries no content: it matches an empty body.
   */
  async match(
    family: RecordFamily,
    txIdRaw: unknown,
    input: WriteInput & { readonly prevTxId?: string | undefined },
  ): Promise<MatchResult> {
    if (family === 'linked') this.requireFeature('linked');
    this.requireFeature('verify');
    const txId = parseTxId(txIdRaw);
    const prevTxId = input.prevTxId === undefined || input.prevTxId === '' ? undefined : parseTxId(input.prevTxId, 'prevTxId');
    const steps =
      input.encode === undefined ? undefined : parseEncodeParam(input.encode, { available: this.deps.config.encoders, unencodedAllowed: true });
    const [found, confirmation] = await Promise.all([this.deps.store.withBytes(txId), this.confirmation(txId)]);
    const meta = this.requireFamily(found?.meta ?? null, family, txId);
    const stored = found?.bytes ?? Buffer.alloc(0);
    const body = input.body ?? new Uint8Array(0);
    if (meta.kind !== 'delete') this.requireBody(body);
    if (family === 'linked' && meta.kind !== 'create' && prevTxId === undefined) {
      throw badRequest('PREV_TX_ID_PARAM_MISSING', 'prevTxId is required to match an update or delete: the txId of the record it links to.');
    }
    const linkOk = family === 'independent' || (prevTxId ?? null) === meta.prevTxId;
    let contentOk: boolean;
    if (meta.kind === 'delete') {
      contentOk = body.byteLength === 0;
    } else {
      const chain: EncodeStep[] = steps ?? meta.encoders.map((encoder) => ({ encoder }));
      const encodingOk = chain.length === meta.encoders.length && chain.every((s, i) => s.encoder === meta.encoders[i]);
      contentOk = encodingOk && Buffer.from(applyEncoding(chain, body).bytes).equals(stored);
    }
    return { match: linkOk && contentOk, confirmation };
  }

  /** GET /linkedrecords/:txId/navigate (one Redis round trip however many links). */
  async navigate(txIdRaw: unknown, linksRaw: unknown): Promise<NavigateResult> {
    this.requireFeature('linked');
    this.requireFeature('navigate');
    const txId = parseTxId(txIdRaw);
    const links = parseLinks(linksRaw, this.deps.config.maxLinks);
    const out = await this.deps.store.navigate(txId, links);
    if (out.status !== 'OK') {
      if (out.status === 'TX_NOT_FOUND') throw txNotFound(txId);
      throw badRequest('INVALID_NAVIGATION_TRANSACTION_TYPE', 'Only linked records can be navigated; this txId is an independent record.');
    }
    return { txIds: out.txIds, endOfLinks: out.endOfLinks, maxLinksRequestable: this.deps.config.maxLinks };
  }

  /** Confirmation of a mined transaction with its proof; null until mined and proven. */
  async confirmation(txId: string): Promise<Confirmation | null> {
    return (await this.confirmations([txId]))[0] ?? null;
  }

  /** Batched confirmations (one chain read for many txIds: GraphQL dataloaders use this). */
  async confirmations(txIds: readonly string[]): Promise<(Confirmation | null)[]> {
    const [tip, inclusions] = await Promise.all([this.deps.reader.tipHeight(), this.deps.reader.inclusions(txIds)]);
    return inclusions.map((inc) =>
      inc && inc.proof
        ? {
            confirmedBlocks: tip - inc.blockHeight + 1,
            blockHash: inc.blockHash,
            blockTimestamp: inc.blockTime.toISOString(),
            merkleProof: inc.proof,
          }
        : null,
    );
  }

  /**
   * One record of `family` by txId, with the same rules as the REST reads: 400
   * TX_ID_PARAM_INVALID, 403 FEATURE_NOT_ENABLED (linked), 404 TX_NOT_FOUND, 400
   * TX_INCORRECT_EVENT_TRANSACTION_TYPE for the other family. GraphQL's root fields use this.
   */
  async find(family: RecordFamily, txIdRaw: unknown): Promise<RecordMeta> {
    if (family === 'linked') this.requireFeature('linked');
    const txId = parseTxId(txIdRaw);
    return this.requireFamily(await this.deps.store.meta(txId), family, txId);
  }

  /** Batched metadata of already validated txIds (null where unknown): one round trip (GraphQL dataloaders). */
  async records(txIds: readonly string[]): Promise<(RecordMeta | null)[]> {
    return this.deps.store.metaMany(txIds);
  }

  /** Batched bytes on chain of already validated txIds (null where unknown): one round trip. */
  async contents(txIds: readonly string[]): Promise<(Buffer | null)[]> {
    return this.deps.store.bytesMany(txIds);
  }

  /** Walking a chain (navigate, GraphQL previous/next/chain) needs the linked and navigate features: else 403 FEATURE_NOT_ENABLED. */
  requireNavigation(): void {
    this.requireFeature('linked');
    this.requireFeature('navigate');
  }

  /**
   * A page of the linked chain `chainId` by position (0 = the create), Relay style: `first`
   * records after position `after`, or the `last` records before position `before` (both
   * bounds exclusive, either may be absent). Exactly one of first/last, at least 1. One round
   * trip. Needs navigation ({@link requireNavigation}).
   */
  async chainPage(chainId: string, page: ChainPageRequest): Promise<ChainPage> {
    this.requireNavigation();
    const { first, last, after, before } = page;
    const lower = after === undefined ? 0 : Math.max(after + 1, 0);
    if (first !== undefined) {
      let stop = lower + first - 1;
      if (before !== undefined) stop = Math.min(stop, before - 1);
      if (stop < lower) return { total: (await this.deps.store.chainRange(chainId, 1, 0)).total, start: lower, txIds: [] };
      const { total, txIds } = await this.deps.store.chainRange(chainId, lower, stop);
      return { total, start: lower, txIds };
    }
    const count = last ?? 0;
    if (before === undefined) {
      const { total, txIds } = await this.deps.store.chainRange(chainId, -count, -1);
      const start = total - txIds.length;
      const skip = Math.max(lower - start, 0);
      return { total, start: start + skip, txIds: txIds.slice(skip) };
    }
    const stop = before - 1;
    const start = Math.max(stop - count + 1, lower);
    // An empty window still reads the length (LRANGE 1 0 is always empty; never pass a negative stop here).
    if (stop < start) return { total: (await this.deps.store.chainRange(chainId, 1, 0)).total, start, txIds: [] };
    const { total, txIds } = await this.deps.store.chainRange(chainId, start, stop);
    return { total, start, txIds };
  }

  /** Metadata of a record (GraphQL traversal); null when unknown. */
  async record(txIdRaw: unknown): Promise<RecordMeta | null> {
    return this.deps.store.meta(parseTxId(txIdRaw));
  }

  private requireFeature(feature: FeatureName): void {
    if (!this.deps.config.features[feature]) {
      throw forbidden(
        'FEATURE_NOT_ENABLED',
        `The ${feature} feature is not enabled on this deployment; it requires an upgrade of your plan (FEATURES).`,
      );
    }
  }

  private encodeSteps(raw: string | undefined): EncodeStep[] {
    return parseEncodeParam(raw, { available: this.deps.config.encoders, unencodedAllowed: this.deps.config.features.unencoded });
  }

  private requireBody(body: Uint8Array | undefined): Uint8Array {
    if (!body || body.byteLength === 0) throw badRequest('CONTENT_IS_REQUIRED', 'The request body (the record, as application/octet-stream) is required.');
    if (body.byteLength > this.deps.config.maxRecordBytes) {
      throw new AppError({
        errorCode: 'CONTENT_LENGTH_LIMIT_EXCEEDED',
        httpStatus: 413,
        detail: `A record may be at most ${this.deps.config.maxRecordBytes} bytes.`,
      });
    }
    return body;
  }

  private requireFamily(meta: RecordMeta | null, family: RecordFamily, txId: string): RecordMeta {
    if (!meta) throw txNotFound(txId);
    if (meta.family !== family) throw wrongFamily(family);
    return meta;
  }

  /**
   * The previous record must exist and be linked. Token, tenant and end-of-chain are decided by
   * the accept script alone, atomically with the write, so that concurrent writers agree.
   */
  private async linkablePrevious(prevTxId: string): Promise<RecordMeta> {
    return this.requireFamily(await this.deps.store.meta(prevTxId), 'linked', prevTxId);
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
      rawTx: tx.rawHex,
      link: tx.linkOutput ? { vout: tx.linkOutput.vout, satoshis: tx.linkOutput.satoshis } : null,
      tokenHash,
      acceptedAt: this.deps.clock.now(),
    };
  }

  /** After the accept script: map a refusal to its error, else enqueue the publication. */
  private async accepted(outcome: AcceptOutcome, txId: string, prevTxId?: string): Promise<void> {
    this.assertAccepted(outcome, txId, prevTxId);
    await this.enqueue(txId);
  }

  private assertAccepted(outcome: AcceptOutcome, txId: string, prevTxId?: string): void {
    switch (outcome) {
      case 'OK':
        return;
      case 'TX_NOT_FOUND':
        throw txNotFound(prevTxId ?? txId);
      case 'WRONG_FAMILY':
        throw wrongFamily('linked');
      case 'TOKEN_INVALID':
        throw invalidUpdateToken();
      case 'FORBIDDEN':
        throw forbidden('FORBIDDEN', 'Without its updateToken only the tenant that created this linked record may update or delete it.');
      case 'BACKPRESSURE':
        throw unavailable(
          'PUBLICATION_BACKLOG_FULL',
          'Too many records are waiting for publication; nothing was stored. Retry after the Retry-After delay.',
          5,
        );
      case 'NOT_END':
        throw new AppError({
          errorCode: 'NOT_LINKED_RECORDS_END',
          httpStatus: 409,
          detail: 'This linked record is not the end of its chain (it was already updated or deleted); update the latest record.',
        });
      default:
        throw new AppError({ errorCode: 'INTERNAL_ERROR', httpStatus: 500, detail: 'The record could not be stored.', internalDetail: `accept: ${outcome} for ${txId}` });
    }
  }

  /**
   * The record is durable (outbox) before this runs; a failure here is logged, not returned:
   * the publisher's outbox sweeper enqueues it shortly.
   */
  private async enqueue(txId: string): Promise<void> {
    try {
      await this.deps.queue.enqueue(txId);
    } catch (err) {
      this.deps.logger?.warn({ txId, err: err instanceof Error ? err.message : String(err) }, 'enqueue failed; the outbox sweeper will publish it');
    }
  }
}

function txNotFound(txId: string): AppError {
  return notFound('TX_NOT_FOUND', `No record with txId ${txId}.`);
}

function wrongFamily(expected: RecordFamily): AppError {
  return badRequest(
    'TX_INCORRECT_EVENT_TRANSACTION_TYPE',
    expected === 'linked'
      ? 'This txId is an independent record; use the /api/v1/records endpoints.'
      : 'This txId is a linked record; use the /api/v1/linkedrecords endpoints.',
  );
}

