export * from './validate';
export * from './edge';
export * from './pages';
