import { AppError } from '@proofline/shared-errors';
import type { ChainReader, SpvCodec } from '@proofline/chain-domain';
import { parseTxId, receiptFamily } from '@proofline/records-domain';
import type { Receipt, RecordFamily, RecordMeta } from '@proofline/records-domain';
import type { TxInclusion } from '@proofline/chain-domain';
import type { RecordStore } from '@proofline/records-data-access';
import { requireFamily, requireFeature } from './guards';
import type { RecordsConfig } from './types';

export interface RecordReceiptsDeps {
  readonly config: RecordsConfig;
  readonly store: RecordStore;
  readonly reader: ChainReader;
  readonly spv: SpvCodec;
}

/** Seconds a client should wait before asking again for the receipt of an unconfirmed record. */
export const RECEIPT_RETRY_AFTER_SECONDS = 5;

/**
 * The receipt use case (`GET …/{txId}/receipt`, REST and GraphQL). Reads the raw transaction
 * from the records store and the inclusion only through {@link ChainReader.inclusions}, so any
 * chain that serves TSC proofs (the devnet, ARC) serves receipts unchanged.
 */
export class RecordReceipts {
  constructor(private readonly deps: RecordReceiptsDeps) {}

  /**
   * The receipt of a confirmed record of `family`.
   * @throws AppError 400 TX_ID_PARAM_INVALID / TX_INCORRECT_EVENT_TRANSACTION_TYPE, 403
   *   FEATURE_NOT_ENABLED (linked), 404 TX_NOT_FOUND, 409 RECEIPT_NOT_READY (with Retry-After
   *   while the record may still be confirmed; without it once its publication failed).
   */
  async receipt(family: RecordFamily, txIdRaw: unknown): Promise<Receipt> {
    if (family === 'linked') requireFeature(this.deps.config, 'linked');
    const txId = parseTxId(txIdRaw);
    const [found, inclusions] = await Promise.all([
      this.deps.store.receiptMaterial(txId),
      this.deps.reader.inclusions([txId]),
    ]);
    const meta = requireFamily(found?.meta ?? null, family, txId);
    const inclusion = inclusions[0] ?? null;
    if (!found || !inclusion?.proof) {
      if (meta.state === 'failed') {
        throw new AppError({
          errorCode: 'RECEIPT_NOT_READY',
          httpStatus: 409,
          detail:
            'The chain rejected this record for good (status shows publication "failed"): it will never be confirmed, so it has no receipt.',
        });
      }
      throw new AppError({
        errorCode: 'RECEIPT_NOT_READY',
        httpStatus: 409,
        detail:
          'The record is not confirmed yet: its receipt exists once it is mined and proven (status shows the confirmation).',
        headers: { 'Retry-After': String(RECEIPT_RETRY_AFTER_SECONDS) },
      });
    }
    return this.build(meta, found.rawTx, inclusion);
  }

  /**
   * Receipts of already validated txIds, in order: null where unknown or not confirmed yet. Two
   * pipelined store reads and one chain read, in parallel, for the whole batch (GraphQL dataloaders).
   */
  async receiptMany(txIds: readonly string[]): Promise<(Receipt | null)[]> {
    if (txIds.length === 0) return [];
    const [metas, raws, inclusions] = await Promise.all([
      this.deps.store.metaMany(txIds),
      this.deps.store.rawTxMany(txIds),
      this.deps.reader.inclusions(txIds),
    ]);
    return txIds.map((_txId, i) => {
      const meta = metas[i] ?? null;
      const rawTx = raws[i] ?? null;
      const inclusion = inclusions[i] ?? null;
      return meta && rawTx && inclusion?.proof ? this.build(meta, rawTx, inclusion) : null;
    });
  }

  /** A receipt is an answer: the transaction goes out as hex, here. */
  private build(meta: RecordMeta, rawTx: Uint8Array, inclusion: TxInclusion): Receipt {
    const { txId } = meta;
    const proof = inclusion.proof;
    if (!proof) throw new Error(`no proof for ${txId}`);
    const beef = this.deps.spv.toBeef({ rawTx, proof, blockHeight: inclusion.blockHeight });
    return {
      version: 1,
      txId,
      family: receiptFamily(meta.family),
      ...(meta.family === 'linked' ? { prevTxId: meta.prevTxId } : {}),
      rawTx: Buffer.from(rawTx.buffer, rawTx.byteOffset, rawTx.byteLength).toString('hex'),
      encoding: [...meta.encoders],
      contentType: meta.contentType,
      merkleProof: { ...proof, nodes: [...proof.nodes] },
      blockHeader: proof.target.toLowerCase(),
      blockHash: inclusion.blockHash,
      blockHeight: inclusion.blockHeight,
      beef,
    };
  }
}
