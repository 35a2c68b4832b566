export * from './errors';
export * from './key-cache';
export * from './identity-service';
export * from './key-worker';
export * from './admin';
export * from './require-key';
export * from './authorize';
