export * from './dom';
