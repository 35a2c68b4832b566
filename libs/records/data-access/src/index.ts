export * from './keys';
export * from './record-store';
