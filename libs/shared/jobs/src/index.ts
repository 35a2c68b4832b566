export * from './queues';
export * from './records-jobs';
