export * from './keys';
export {
  DATA_VOUT,
  FUNDING_NONCE_BYTES,
  LAYOUT_VERSION,
  LINK_VOUT,
  PROTOCOL_TAG,
  decodeHeaderScript,
  headerScriptBytes,
} from './scripts';
export type { RecordHeader } from './scripts';
export * from './record-tx-builder';
export * from './coinbase';
export * from './parse-transaction';
export * from './merkle-path';
export * from './spv-codec';
export * from './split-tx-builder';
