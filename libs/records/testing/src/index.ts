export * from './in-memory-chain';
