export * from './record-store';
