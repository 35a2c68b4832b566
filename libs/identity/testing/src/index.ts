export * from './seed-key';
