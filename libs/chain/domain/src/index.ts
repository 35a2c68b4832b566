export * from './ports';
export * from './hash';
export * from './block-header';
export * from './merkle';
export * from './arc-ports';
export * from './spv-ports';
export * from './broadcast-verdict';
export * from './extended-format';
