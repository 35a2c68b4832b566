export * from './seed-key';
export * from './test-identity';
