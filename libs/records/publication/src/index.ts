export * from './create-publication';
export * from './producer';
export * from './publish';
export * from './worker';
export * from './sweeper';
export * from './settlement';
