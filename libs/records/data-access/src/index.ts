export * from './keys';
export * from './record-store';
export * from './script-replies';
