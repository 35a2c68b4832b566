import { badRequest } from '@proofline/shared-errors';
import { confirmedBlocks } from '@proofline/chain-domain';
import type { ChainReader } from '@proofline/chain-domain';
import { applyEncoding, isUpdatable, parseEncodeParam, parseLinks, parseTxId } from '@proofline/records-domain';
import type { EncodeStep, RecordFamily, RecordMeta } from '@proofline/records-domain';
import type { RecordStore } from '@proofline/records-data-access';
import { requireBody, requireFamily, requireFeature, txNotFound } from './guards';
import type {
  ChainPage,
  ChainPageRequest,
  Confirmation,
  ContentResult,
  MatchResult,
  NavigateResult,
  RecordsConfig,
  StatusResult,
  WriteInput,
} from './types';

export interface RecordReadsDeps {
  readonly config: RecordsConfig;
  readonly store: RecordStore;
  readonly reader: ChainReader;
}

/**
 * The records read use cases, shared by REST and GraphQL. Methods taking a raw txId validate it
 * and throw {@link AppError} (400/403/404) for anything that is not an expected outcome; the
 * `…Many` methods take already validated txIds and answer in one round trip (dataloaders).
 */
export class RecordReads {
  constructor(private readonly deps: RecordReadsDeps) {}

  get maxLinks(): number {
    return this.deps.config.maxLinks;
  }

  /** GET …/status. */
  async status(family: RecordFamily, txIdRaw: unknown): Promise<StatusResult> {
    if (family === 'linked') requireFeature(this.deps.config, 'linked');
    const txId = parseTxId(txIdRaw);
    const [meta, confirmation] = await Promise.all([this.deps.store.meta(txId), this.confirmation(txId)]);
    const found = requireFamily(meta, family, txId);
    // A failed publication says why (e.g. `INVALID_TX: ARC 461: …`): the chain's code and reason.
    const failure = found.state === 'failed' && found.failure ? { failure: found.failure } : {};
    return family === 'linked'
      ? { confirmation, updatable: isUpdatable(found), publication: found.state, ...failure }
      : { confirmation, publication: found.state, ...failure };
  }

  /**
   * One record of `family` by txId, with the same rules as the REST reads: 400
   * TX_ID_PARAM_INVALID, 403 FEATURE_NOT_ENABLED (linked), 404 TX_NOT_FOUND, 400
   * TX_INCORRECT_EVENT_TRANSACTION_TYPE for the other family. GraphQL's root fields use this.
   */
  async meta(family: RecordFamily, txIdRaw: unknown): Promise<RecordMeta> {
    if (family === 'linked') requireFeature(this.deps.config, 'linked');
    const txId = parseTxId(txIdRaw);
    return requireFamily(await this.deps.store.meta(txId), family, txId);
  }

  /** Metadata of already validated txIds (null where unknown), in order, in one round trip. */
  async metaMany(txIds: readonly string[]): Promise<(RecordMeta | null)[]> {
    return this.deps.store.metaMany(txIds);
  }

  /** GET/HEAD …/content: the exact bytes on chain. */
  async content(family: RecordFamily, txIdRaw: unknown): Promise<ContentResult> {
    if (family === 'linked') requireFeature(this.deps.config, 'linked');
    const txId = parseTxId(txIdRaw);
    const found = await this.deps.store.withBytes(txId);
    const meta = requireFamily(found?.meta ?? null, family, txId);
    return { txId, bytes: found?.bytes ?? Buffer.alloc(0), contentType: meta.contentType };
  }

  /** The bytes on chain of already validated txIds (null where unknown), in order, in one round trip. */
  async contentMany(txIds: readonly string[]): Promise<(Buffer | null)[]> {
    return this.deps.store.bytesMany(txIds);
  }

  /** Confirmation of a mined transaction with its proof; null until mined and proven. */
  async confirmation(txId: string): Promise<Confirmation | null> {
    return (await this.confirmationMany([txId]))[0] ?? null;
  }

  /** Confirmations of many txIds in one chain read (GraphQL dataloaders). */
  async confirmationMany(txIds: readonly string[]): Promise<(Confirmation | null)[]> {
    const [tip, inclusions] = await Promise.all([this.deps.reader.tipHeight(), this.deps.reader.inclusions(txIds)]);
    return inclusions.map((inc) =>
      inc && inc.proof
        ? {
            confirmedBlocks: confirmedBlocks(tip, inc.blockHeight),
            blockHash: inc.blockHash,
            blockTimestamp: inc.blockTime.toISOString(),
            merkleProof: inc.proof,
          }
        : null,
    );
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
    const { config } = this.deps;
    if (family === 'linked') requireFeature(config, 'linked');
    requireFeature(config, 'verify');
    const txId = parseTxId(txIdRaw);
    const prevTxId =
      input.prevTxId === undefined || input.prevTxId === '' ? undefined : parseTxId(input.prevTxId, 'prevTxId');
    const steps =
      input.encode === undefined
        ? undefined
        : parseEncodeParam(input.encode, { available: config.encoders, unencodedAllowed: true });
    const [found, confirmation] = await Promise.all([this.deps.store.withBytes(txId), this.confirmation(txId)]);
    const meta = requireFamily(found?.meta ?? null, family, txId);
    const stored = found?.bytes ?? Buffer.alloc(0);
    const body = input.body ?? new Uint8Array(0);
    if (meta.kind !== 'delete') requireBody(config, body);
    if (family === 'linked' && meta.kind !== 'create' && prevTxId === undefined) {
      throw badRequest(
        'PREV_TX_ID_PARAM_MISSING',
        'prevTxId is required to match an update or delete: the txId of the record it links to.',
      );
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
    this.requireNavigation();
    const txId = parseTxId(txIdRaw);
    const links = parseLinks(linksRaw, this.deps.config.maxLinks);
    const out = await this.deps.store.navigate(txId, links);
    if (out.status !== 'OK') {
      if (out.status === 'TX_NOT_FOUND') throw txNotFound(txId);
      throw badRequest(
        'INVALID_NAVIGATION_TRANSACTION_TYPE',
        'Only linked records can be navigated; this txId is an independent record.',
      );
    }
    return { txIds: out.txIds, endOfLinks: out.endOfLinks, maxLinksRequestable: this.deps.config.maxLinks };
  }

  /** Walking a chain (navigate, GraphQL previous/next/chain) needs the linked and navigate features: else 403 FEATURE_NOT_ENABLED. */
  requireNavigation(): void {
    requireFeature(this.deps.config, 'linked');
    requireFeature(this.deps.config, 'navigate');
  }

  /**
   * A page of the linked chain `chainId` by position (0 = the create), Relay style: `first`
   * records after position `after`, or the `last` records before position `before` (both
   * bounds exclusive, either may be absent). Exactly one of first/last, at least 1. One round
   * trip. Needs navigation ({@link requireNavigation}).
   */
  async chainPage(chainId: string, page: ChainPageRequest): Promise<ChainPage> {
    this.requireNavigation();
    const { store } = this.deps;
    const { first, last, after, before } = page;
    const lower = after === undefined ? 0 : Math.max(after + 1, 0);
    if (first !== undefined) {
      let stop = lower + first - 1;
      if (before !== undefined) stop = Math.min(stop, before - 1);
      if (stop < lower) return { total: (await store.chainRange(chainId, 1, 0)).total, start: lower, txIds: [] };
      const { total, txIds } = await store.chainRange(chainId, lower, stop);
      return { total, start: lower, txIds };
    }
    const count = last ?? 0;
    if (before === undefined) {
      const { total, txIds } = await store.chainRange(chainId, -count, -1);
      const start = total - txIds.length;
      const skip = Math.max(lower - start, 0);
      return { total, start: start + skip, txIds: txIds.slice(skip) };
    }
    const stop = before - 1;
    const start = Math.max(stop - count + 1, lower);
    // An empty window still reads the length (LRANGE 1 0 is always empty; never pass a negative stop here).
    if (stop < start) return { total: (await store.chainRange(chainId, 1, 0)).total, start, txIds: [] };
    const { total, txIds } = await store.chainRange(chainId, start, stop);
    return { total, start, txIds };
  }
}
