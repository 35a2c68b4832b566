export * from './webhook';
export * from './signature';
export * from './delivery-job';
export * from './address-policy';
