export * from './arc-devnet';
export * from './arc-proxy';
export * from './arc-rule-proxy';
