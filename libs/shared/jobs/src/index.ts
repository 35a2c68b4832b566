export * from './queues';
export * from './identity-jobs';
export * from './records-jobs';
export * from './chain-jobs';
