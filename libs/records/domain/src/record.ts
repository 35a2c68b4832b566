import type { EncoderName } from '@proofline/shared-config';
import type { PublicationState } from './responses';

/** Linked records form chains; independent records stand alone. */
export type RecordFamily = 'linked' | 'independent';
export type RecordKind = 'create' | 'update' | 'delete' | 'independent';

/** A stored record without its bytes and raw transaction. */
export interface RecordMeta {
  readonly txId: string;
  readonly family: RecordFamily;
  readonly kind: RecordKind;
  readonly tenant: string;
  /** txId of the chain's create (linked), the record's own txId otherwise. */
  readonly chainId: string;
  /** 0 for a create, +1 per link. */
  readonly position: number;
  readonly prevTxId: string | null;
  readonly nextTxId: string | null;
  readonly contentType: string;
  readonly encoders: EncoderName[];
  readonly acceptedAt: string;
  readonly state: PublicationState;
  readonly failure: string | null;
  /** The link output spent by the next record (linked create/update). */
  readonly linkVout: number | null;
  readonly linkSatoshis: number | null;
  readonly byteLength: number;
}

/** `updatable`: a linked record that is not a delete and that no accepted record links to yet. */
export function isUpdatable(meta: Pick<RecordMeta, 'family' | 'kind' | 'nextTxId'>): boolean {
  return meta.family === 'linked' && meta.kind !== 'delete' && meta.nextTxId === null;
}
