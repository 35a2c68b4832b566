/**
 * Mainnet block 100000, a vector known independently of this code (it is on every block
 * explorer): its four txIds, its header fields (hashes in display hex) and its hash. The chain
 * specs rebuild its Merkle root and header hash from these and check proofs against them.
 */
export const MAINNET_BLOCK_100000 = {
  height: 100000,
  txIds: [
    '8c14f0db3df150123e6f3dbbf30f8b955a8249b62ac1d1ff16284aefa3d06d87',
    'fff2525b8931402dd09222c50775608f75787bd2b87e56995a7bdd30f79702c4',
    '6359f0868171b1d194cbee1af2f16ea598ae8fad666d9b012c8ed2b79a236ec4',
    'e9a66845e05d5abc0ad04ec80f774a7e585c6e8db975962d069a522137b80c1d',
  ],
  merkleRoot: 'f3e94742aca4b5ef85488dc37c06c3282295ffec960994b2c0d5ac2a25a95766',
  header: {
    version: 1,
    prevHash: '000000000002d01c1fccc21636b607dfd930d31d01c3a62104612a1719011250',
    merkleRoot: 'f3e94742aca4b5ef85488dc37c06c3282295ffec960994b2c0d5ac2a25a95766',
    time: 1293623863,
    bits: 0x1b04864c,
    nonce: 274148111,
  },
  hash: '000000000003ba27aa200b1cecaad478d2b00432346c3f1f3986da1afd33e506',
} as const;
