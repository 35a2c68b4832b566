export * from './keys';
export * from './record-layout';
export * from './record-tx-builder';
export * from './coinbase';
export * from './parse-transaction';
export * from './merkle-path';
export * from './spv-codec';
export * from './split-tx-builder';
