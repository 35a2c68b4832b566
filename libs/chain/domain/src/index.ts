export * from './ports';
