export * from './connection';
export * from './scripts';
export * from './keys';
export * from './heartbeat';
