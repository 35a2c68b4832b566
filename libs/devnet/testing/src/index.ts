export * from './arc-devnet';
