export * from './keys';
export * from './devnet-publisher';
export * from './block-producer';
export * from './devnet-reader';
export * from './block-producer-worker';
export * from './devnet-blocks';
export * from './devnet-chain';
export * from './node';
