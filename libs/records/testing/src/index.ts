export * from './in-memory-chain';
export * from './fund-pool';
