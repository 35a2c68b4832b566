export * from './keys';
export * from './webhook-store';
