export * from './service';
export * from './publisher';
