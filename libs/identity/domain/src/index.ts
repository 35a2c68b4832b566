export * from './permissions';
export * from './key-material';
export * from './ids';
export * from './api-key';
export * from './schemas';
