import { createHash } from 'node:crypto';
import {
  REGTEST_BITS,
  blockHash,
  headerFacts,
  buildBranchProofs,
  merkleBranches,
  merkleRoot,
  meetsTarget,
  mineHeader,
  parseHeader,
  serializeHeader,
  sha256d,
  toDisplayHex,
  verifyTscProof,
} from './index';
import type { BlockHeader, TscMerkleProof } from './index';
import { MAINNET_BLOCK_100000 } from '@proofline/shared-testing';

/**
 * Real Bitcoin vectors, known independently of this code (they are on every block explorer).
 */
const GENESIS = {
  headerHex:
    '0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c',
  hash: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f',
  merkleRoot: '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b',
  time: 1231006505,
  bits: 0x1d00ffff,
  nonce: 2083236893,
};

const BLOCK_100000 = MAINNET_BLOCK_100000;

/** Deterministic fake txIds. */
function txIds(n: number, salt = 'tx'): string[] {
  return Array.from({ length: n }, (_, i) => createHash('sha256').update(`${salt}-${i}`).digest('hex'));
}

function headerFor(ids: string[]): string {
  return serializeHeader({
    version: 0x20000000,
    prevHash: '0'.repeat(64),
    merkleRoot: merkleRoot(ids),
    time: 1_700_000_000,
    bits: REGTEST_BITS,
    nonce: 0,
  }).toString('hex');
}

describe('block header', () => {
  it('parses the genesis header and hashes it to the genesis block hash', () => {
    const h = parseHeader(GENESIS.headerHex);
    expect(h).toEqual({
      version: 1,
      prevHash: '0'.repeat(64),
      merkleRoot: GENESIS.merkleRoot,
      time: GENESIS.time,
      bits: GENESIS.bits,
      nonce: GENESIS.nonce,
    });
    expect(blockHash(GENESIS.headerHex)).toBe(GENESIS.hash);
    expect(blockHash(h)).toBe(GENESIS.hash);
    expect(meetsTarget(h)).toBe(true);
  });

  it('serializes block 100000 to the bytes whose reversed sha256d is its hash', () => {
    const bytes = serializeHeader(BLOCK_100000.header);
    expect(bytes).toHaveLength(80);
    expect(toDisplayHex(sha256d(bytes))).toBe(BLOCK_100000.hash);
    expect(parseHeader(bytes.toString('hex'))).toEqual(BLOCK_100000.header);
    expect(meetsTarget(BLOCK_100000.header)).toBe(true);
  });

  it('round-trips serialize/parse and keeps little-endian fields', () => {
    const h: BlockHeader = {
      version: 0x20000000,
      prevHash: txIds(1)[0] as string,
      merkleRoot: txIds(1, 'm')[0] as string,
      time: 0xfffffffe,
      bits: REGTEST_BITS,
      nonce: 0x01020304,
    };
    const hex = serializeHeader(h).toString('hex');
    expect(parseHeader(hex)).toEqual(h);
    expect(hex.slice(152)).toBe('04030201');
    expect(hex.slice(144, 152)).toBe('ffff7f20');
  });

  it('rejects a header that is not 80 bytes', () => {
    expect(() => parseHeader('00'.repeat(79))).toThrow(/80 bytes/);
    expect(() => parseHeader('zz'.repeat(80))).toThrow(/hex/);
  });

  it('mines a regtest header whose hash meets the target', () => {
    const mined = mineHeader(parseHeader(headerFor(txIds(3))));
    expect(meetsTarget(mined.header)).toBe(true);
    expect(blockHash(mined.hex)).toBe(mined.hash);
  });
});

describe('Merkle root and proofs', () => {
  it('computes the Merkle root of block 100000 and of the genesis block', () => {
    expect(merkleRoot(BLOCK_100000.txIds)).toBe(BLOCK_100000.merkleRoot);
    expect(merkleRoot([GENESIS.merkleRoot])).toBe(GENESIS.merkleRoot);
  });

  it('rebuilds block 100000 level by level', () => {
    const [a, b, c, d] = BLOCK_100000.txIds.map((t) => Buffer.from(t, 'hex').reverse()) as Buffer[];
    const ab = sha256d(Buffer.concat([a as Buffer, b as Buffer]));
    const cd = sha256d(Buffer.concat([c as Buffer, d as Buffer]));
    expect(toDisplayHex(sha256d(Buffer.concat([ab, cd])))).toBe(BLOCK_100000.merkleRoot);
    const { branches } = merkleBranches(BLOCK_100000.txIds);
    expect(branches[0]).toEqual([BLOCK_100000.txIds[1], toDisplayHex(cd)]);
    expect(branches[3]).toEqual([BLOCK_100000.txIds[2], toDisplayHex(ab)]);
  });

  it('verifies every proof of block 100000 against its real header', () => {
    const headerHex = serializeHeader(BLOCK_100000.header).toString('hex');
    const proofs = buildBranchProofs(BLOCK_100000.txIds, headerHex);
    proofs.forEach((p, i) => {
      expect(p).toMatchObject({
        index: i,
        txOrId: BLOCK_100000.txIds[i],
        target: headerHex,
        targetType: 'header',
        proofType: 'branch',
        composite: false,
      });
      expect(verifyTscProof(p, BLOCK_100000.txIds[i] as string)).toEqual({
        valid: true,
        root: BLOCK_100000.merkleRoot,
      });
    });
  });

  it.each([1, 2, 3, 5, 8, 13])('round-trips every proof of a %i-tx block', (n) => {
    const ids = txIds(n, `b${n}`);
    const header = headerFor(ids);
    const proofs = buildBranchProofs(ids, header);
    expect(proofs).toHaveLength(n);
    for (const [i, proof] of proofs.entries()) {
      expect(proof.index).toBe(i);
      expect(proof.nodes).toHaveLength(n === 1 ? 0 : Math.ceil(Math.log2(n)));
      expect(verifyTscProof(proof, ids[i] as string).valid).toBe(true);
    }
  });

  it('marks the duplicated sibling of an odd level with "*"', () => {
    const ids = txIds(3);
    const { branches } = merkleBranches(ids);
    expect(branches[2]?.[0]).toBe('*');
    expect(branches[0]?.[0]).toBe(ids[1]);
    const five = merkleBranches(txIds(5)).branches;
    expect(five[4]).toEqual(['*', '*', expect.stringMatching(/^[0-9a-f]{64}$/)]);
  });

  it('rejects a tampered proof, a wrong txId, a wrong index and a bad duplicate', () => {
    const ids = txIds(5);
    const header = headerFor(ids);
    const proof = buildBranchProofs(ids, header)[1] as TscMerkleProof;
    expect(verifyTscProof(proof, ids[2] as string).valid).toBe(false);
    expect(verifyTscProof({ ...proof, index: 0 }, ids[1] as string).valid).toBe(false);
    expect(verifyTscProof({ ...proof, index: 9 }, ids[1] as string).valid).toBe(false);
    expect(verifyTscProof({ ...proof, nodes: ['*', ...proof.nodes.slice(1)] }, ids[1] as string)).toMatchObject({
      valid: false,
    });
    const tampered = [...proof.nodes];
    tampered[1] = ids[4] as string;
    expect(verifyTscProof({ ...proof, nodes: tampered }, ids[1] as string)).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/root/),
    });
    expect(verifyTscProof({ ...proof, target: header.slice(2) }, ids[1] as string).valid).toBe(false);
  });

  it('remembered folds change no verdict: after every proof of a block verified, a proof with one wrong upper node, a wrong leaf or a foreign header still fails', () => {
    const ids = txIds(37);
    const header = headerFor(ids);
    const proofs = buildBranchProofs(ids, header);
    for (const [i, proof] of proofs.entries()) expect(verifyTscProof(proof, ids[i] as string).valid).toBe(true);
    // every parent these folds need is remembered now; each mutation must still be caught
    for (const [i, proof] of proofs.entries()) {
      for (let level = 0; level < proof.nodes.length; level++) {
        if (proof.nodes[level] === '*') continue;
        const nodes = [...proof.nodes];
        nodes[level] = (
          ids[(i + 1 + level) % ids.length] === proof.nodes[level]
            ? ids[(i + 2) % ids.length]
            : ids[(i + 1 + level) % ids.length]
        ) as string;
        expect(verifyTscProof({ ...proof, nodes }, ids[i] as string).valid).toBe(false);
      }
      expect(
        verifyTscProof({ ...proof, txOrId: ids[(i + 1) % ids.length] as string }, ids[(i + 1) % ids.length] as string)
          .valid,
      ).toBe(false);
      expect(verifyTscProof({ ...proof, target: headerFor(txIds(3, 'foreign')) }, ids[i] as string).valid).toBe(false);
      expect(verifyTscProof(proof, ids[i] as string).valid).toBe(true);
    }
  });

  it('the reasons of a refused fold, with its parents remembered: an upper-case or short node, a left sibling equal to the running hash (CVE-2012-2459), "*" on the right, a txId that is not hash hex', () => {
    const ids = txIds(6);
    const header = headerFor(ids);
    const proofs = buildBranchProofs(ids, header);
    for (const [i, proof] of proofs.entries()) expect(verifyTscProof(proof, ids[i] as string).valid).toBe(true);
    const proof = proofs[1] as TscMerkleProof;
    const nodes = (f: (n: string[]) => void) => {
      const copy = [...proof.nodes];
      f(copy);
      return { ...proof, nodes: copy };
    };
    const upper = nodes((n) => (n[0] = (n[0] as string).toUpperCase()));
    expect(verifyTscProof(upper, ids[1] as string)).toEqual({ valid: false, reason: 'malformed node' });
    expect(
      verifyTscProof(
        nodes((n) => (n[1] = (n[1] as string).slice(2))),
        ids[1] as string,
      ),
    ).toEqual({
      valid: false,
      reason: 'malformed node',
    });
    // index 1: the leaf is a right child, its sibling on the left; a sibling equal to the leaf is the duplicate trick
    expect(
      verifyTscProof(
        nodes((n) => (n[0] = ids[1] as string)),
        ids[1] as string,
      ),
    ).toEqual({
      valid: false,
      reason: 'left sibling duplicates the running hash',
    });
    expect(
      verifyTscProof(
        nodes((n) => (n[0] = '*')),
        ids[1] as string,
      ),
    ).toEqual({
      valid: false,
      reason: 'duplicate node on the right-hand side',
    });
    const upperTxId = (ids[1] as string).toUpperCase();
    expect(verifyTscProof({ ...proof, txOrId: upperTxId }, upperTxId)).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/^not a 32-byte hash in hex/),
    });
  });

  it('headerFacts: the same fields, hash and target verdict as parsing and hashing each time; malformed headers throw every time', () => {
    for (const hex of [GENESIS.headerHex, headerFor(txIds(3))]) {
      const facts = headerFacts(hex);
      expect(facts.header).toEqual(parseHeader(hex));
      expect(facts.hash).toBe(blockHash(hex));
      expect(facts.meetsTarget).toBe(meetsTarget(parseHeader(hex)));
      expect(headerFacts(hex)).toBe(facts);
      expect(Object.isFrozen(facts.header)).toBe(true);
    }
    // a header whose hash misses its bits: remembered as not meeting the target
    const hard = serializeHeader({ ...parseHeader(headerFor(txIds(2))), bits: 0x1d00ffff }).toString('hex');
    expect(headerFacts(hard).meetsTarget).toBe(false);
    expect(() => headerFacts('00'.repeat(79))).toThrow(/80 bytes/);
    expect(() => headerFacts('00'.repeat(79))).toThrow(/80 bytes/);
  });

  it('refuses to build proofs against a header of another tree', () => {
    expect(() => buildBranchProofs(txIds(4), headerFor(txIds(4, 'other')))).toThrow(/merkle root/);
  });
});
