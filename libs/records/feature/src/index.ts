export * from './types';
export * from './record-reads';
export * from './record-writes';
export * from './records';
export * from './record-receipts';
export * from './receipt-verify';
