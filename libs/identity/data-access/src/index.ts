export * from './keys';
export * from './key-entity';
export * from './key-store';
export * from './om-connection';
export * from './identity-connections';
