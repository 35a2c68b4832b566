export * from './redis';
export * from './ports';
export * from './load';
