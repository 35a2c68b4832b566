export * from './idempotency-store';
export * from './middleware';
