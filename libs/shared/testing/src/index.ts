export * from './redis';
export * from './ports';
export * from './load';
export * from './raw-http';
export * from './log-capture';
export * from './browser';
export * from './loopback-server';
export * from './bitcoin-vectors';
