export * from './connection';
export * from './topology';
export * from './scripts';
export * from './keys';
export * from './heartbeat';
export * from './partitions';
export * from './partition-index';
