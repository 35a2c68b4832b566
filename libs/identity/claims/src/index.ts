export * from './claims';
