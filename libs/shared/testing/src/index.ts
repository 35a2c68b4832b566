export * from './redis';
export * from './ports';
export * from './raw-http';
export * from './log-capture';
