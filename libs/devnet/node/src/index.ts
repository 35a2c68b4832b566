export * from './keys';
export * from './block-producer';
export * from './node';
/** Test helpers for specs that drive the node (a test key, a node on port 0, spends, a callback receiver). */
export * as nodeTestKit from './node/node-test-kit';
