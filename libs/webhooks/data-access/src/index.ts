export * from './webhook-store';
