export * from './arc-devnet';
export * from './arc-proxy';
