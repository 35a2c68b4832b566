export * from './connection';
export * from './topology';
export * from './scripts';
export * from './keys';
export * from './partitions';
export * from './partition-index';
export * from './partition-layouts';
export * from './partition-count';
