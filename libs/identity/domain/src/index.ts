export * from './ids';
export * from './api-key';
export * from './schemas';
export * from './key-record';
export * from './create-key-job';
