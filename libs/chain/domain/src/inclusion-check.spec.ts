import {
  blockHash,
  checkInclusion,
  headerFromFields,
  merkleBranches,
  mineHeader,
  parseHeader,
  serializeHeader,
  tscProof,
} from './block';

const txIds = ['11', '22', '33'].map((b) => b.repeat(32));
const { root, branches } = merkleBranches(txIds);
const mined = mineHeader({
  version: 0x20000000,
  prevHash: '44'.repeat(32),
  merkleRoot: root,
  time: 1_790_000_000,
  bits: 0x207fffff,
  nonce: 0,
});
const proof = tscProof(2, txIds[2]!, mined.hex, branches[2]!);
const claim = {
  txId: txIds[2]!,
  blockHash: mined.hash,
  blockHeight: 9,
  proofHeight: 9,
  proof,
  header: { hex: mined.hex, height: 9 },
};

describe('headerFromFields', () => {
  it('rebuilds the 80 bytes from WhatsOnChain-style fields (signed or unsigned version)', () => {
    const h = parseHeader(mined.hex);
    const fields = {
      version: h.version,
      previousblockhash: h.prevHash,
      merkleroot: h.merkleRoot,
      time: h.time,
      bits: h.bits.toString(16).padStart(8, '0'),
      nonce: h.nonce,
    };
    expect(serializeHeader(headerFromFields(fields)).toString('hex')).toBe(mined.hex);
    const negative = { ...fields, version: -0x10000000 };
    const unsigned = { ...fields, version: 0xf0000000 };
    expect(blockHash(headerFromFields(negative))).toBe(blockHash(headerFromFields(unsigned)));
    expect(headerFromFields({ ...fields, previousblockhash: undefined }).prevHash).toBe('0'.repeat(64));
    expect(() => headerFromFields({ ...fields, bits: 'xyz' })).toThrow(/bits/);
    expect(() => headerFromFields({ ...fields, merkleroot: 'ab' })).toThrow();
    expect(() => headerFromFields({ ...fields, time: -1 })).toThrow(/time/);
  });
});

describe('checkInclusion', () => {
  it('accepts a consistent claim', () => {
    expect(checkInclusion(claim)).toEqual({ valid: true });
  });

  it.each([
    ['MALFORMED_HEADER', { header: { hex: 'abcd', height: 9 } }],
    ['HEADER_HASH_MISMATCH', { blockHash: '55'.repeat(32) }],
    ['HEIGHT_MISMATCH', { blockHeight: 10 }],
    ['HEIGHT_MISMATCH', { proofHeight: 8 }],
    [
      'TARGET_MISMATCH',
      { proof: { ...proof, target: serializeHeader({ ...parseHeader(mined.hex), nonce: 1 }).toString('hex') } },
    ],
    ['ROOT_MISMATCH', { proof: { ...proof, nodes: ['66'.repeat(32), proof.nodes[1]!] } }],
    ['ROOT_MISMATCH', { proof: { ...proof, index: 1 } }],
  ] as const)('refuses %s', (reason, change) => {
    expect(checkInclusion({ ...claim, ...change })).toMatchObject({ valid: false, reason });
  });

  it('refuses a header that misses its own target', () => {
    const hard = serializeHeader({ ...parseHeader(mined.hex), bits: 0x1d00ffff }).toString('hex');
    expect(
      checkInclusion({
        ...claim,
        blockHash: blockHash(hard),
        header: { hex: hard, height: 9 },
        proof: { ...proof, target: hard },
      }),
    ).toMatchObject({ valid: false, reason: 'HEADER_ABOVE_TARGET' });
  });
});
