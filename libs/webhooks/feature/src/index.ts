export * from './secret-box';
export * from './url-guard';
export * from './webhook-admin';
export * from './watcher';
export * from './delivery';
export * from './webhooks';
