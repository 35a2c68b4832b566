export * from './ports';
export * from './block';
export * from './arc-ports';
export * from './spv-ports';
export * from './broadcast-verdict';
export * from './extended-format';
