export * from './keys';
export * from './block-producer';
export * from './node';
