export * from './config';
export * from './clock';
export * from './version';
export * from './launcher-link';
export * from './node-runtime';
