export * from './middleware';
export * from './validate';
