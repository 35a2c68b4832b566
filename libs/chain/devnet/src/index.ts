export * from './keys';
export * from './devnet-publisher';
export * from './block-producer';
export * from './devnet-reader';
export * from './block-producer-worker';
