export { startDevnetNode } from './devnet-node';
export type { DevnetNode, DevnetNodeOptions, DevnetFaults } from './devnet-node';
export { COINBASE_MATURITY, NodeChain } from './node-chain';
export type { AcceptOutcome, MinedBlock } from './node-chain';
export { Callbacker } from './callbacks';
export type { CallbackRegistration } from './callbacks';
export * from './arc-protocol';
export * from './arc-settings';
export * from './tx-format';
