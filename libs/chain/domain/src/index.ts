export * from './ports';
export * from './hash';
export * from './block-header';
export * from './merkle';
