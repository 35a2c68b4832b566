export * from './service';
export * from './publisher';
export * from './testing/in-memory-chain';
