export * from './redis';
export * from './ports';
