export * from './encoding';
export * from './update-token';
export * from './record';
export * from './publish-job';
export * from './receipt';
export * from './responses';
