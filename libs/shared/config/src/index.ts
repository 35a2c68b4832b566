export * from './config';
export * from './clock';
export * from './version';
export * from './launcher-link';
export * from './node-runtime';
export { parseNatMap, parseNodeAddress } from './parsers';
export type { RedisNatMap, RedisNodeAddress } from './parsers';
