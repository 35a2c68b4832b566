export * from './app-error';
export * from './redis-failure';
