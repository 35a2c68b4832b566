/**
 * A record's proof checked as a third party would: the TSC proof from the status answer turned
 * into `@bsv/sdk`'s MerklePath (BUMP) here, independently of the service's own conversion, and
 * verified by the sdk against a chain tracker that reads a WhatsOnChain-compatible headers
 * source (the deployment's HEADERS_URL: the devnet node under `npm start`).
 */
import { createHash } from 'node:crypto';
import { MerklePath } from '@bsv/sdk';
import type { ChainTracker } from '@bsv/sdk';
import { check, same } from './http';

export interface TscProof {
  index: number;
  txOrId: string;
  target: string;
  nodes: readonly string[];
  targetType: string;
  proofType: string;
  composite: boolean;
}

export interface Confirmation {
  confirmedBlocks: number;
  blockHash: string;
  blockTimestamp: string;
  merkleProof: TscProof;
}

interface HeaderJson {
  hash: string;
  height: number;
  merkleroot: string;
}

const reversedHex = (bytes: Buffer): string => Buffer.from(bytes).reverse().toString('hex');
const sha256d = (bytes: Buffer): Buffer =>
  createHash('sha256').update(createHash('sha256').update(bytes).digest()).digest();

/** A block header from the headers source, by hash or height; undefined on 404. */
export async function fetchHeader(headersUrl: string, hashOrHeight: string | number): Promise<HeaderJson | undefined> {
  const res = await fetch(`${headersUrl}/block/${hashOrHeight}/header`);
  if (res.status === 404) return undefined;
  check(res.ok, `headers source: GET /block/${hashOrHeight}/header answered ${res.status}`);
  return (await res.json()) as HeaderJson;
}

/** The sdk's ChainTracker over a WhatsOnChain-compatible headers source. */
export function headersTracker(headersUrl: string): ChainTracker {
  return {
    isValidRootForHeight: async (root: string, height: number) =>
      (await fetchHeader(headersUrl, height))?.merkleroot === root,
    currentHeight: async () => {
      const res = await fetch(`${headersUrl}/chain/info`);
      return ((await res.json()) as { blocks: number }).blocks;
    },
  };
}

/** TSC branch proof -> BUMP levels: the transaction and its sibling at level 0, one sibling above. */
export function merklePathOf(proof: TscProof, blockHeight: number): MerklePath {
  type Leaf = { offset: number; hash?: string; txid?: boolean; duplicate?: boolean };
  const sibling = (level: number, node: string): Leaf => {
    const offset = (proof.index >> level) ^ 1;
    return node === '*' ? { offset, duplicate: true } : { offset, hash: node };
  };
  const self: Leaf = { offset: proof.index, hash: proof.txOrId, txid: true };
  const levels: Leaf[][] = proof.nodes.length === 0 ? [[self]] : proof.nodes.map((n, h) => [sibling(h, n)]);
  if (proof.nodes.length > 0) (levels[0] as Leaf[]).unshift(self);
  return new MerklePath(blockHeight, levels);
}

/**
 * Checks a confirmation of `txId`: the TSC shape, the header in `target` hashing to blockHash with
 * blockTimestamp its time, the headers source knowing that block with that root, and the sdk's
 * `MerklePath.verify` (root computed from the txId and the nodes, checked against the tracker at
 * the block's height). Returns the block's height.
 */
export async function verifyConfirmation(txId: string, c: Confirmation, headersUrl: string): Promise<number> {
  const p = c.merkleProof;
  same(
    { txOrId: p.txOrId, targetType: p.targetType, proofType: p.proofType, composite: p.composite },
    { txOrId: txId, targetType: 'header', proofType: 'branch', composite: false },
    `${txId}: TSC proof fields`,
  );
  check(/^[0-9a-f]{160}$/.test(p.target), `${txId}: target is not an 80-byte header in hex`);
  check(c.confirmedBlocks >= 1, `${txId}: confirmedBlocks ${c.confirmedBlocks}`);
  const header = Buffer.from(p.target, 'hex');
  same(reversedHex(sha256d(header)), c.blockHash, `${txId}: the hash of the proof's header`);
  same(
    new Date(header.readUInt32LE(68) * 1000).toISOString(),
    new Date(c.blockTimestamp).toISOString(),
    `${txId}: blockTimestamp against the header's time`,
  );
  const root = reversedHex(header.subarray(36, 68));
  const known = await fetchHeader(headersUrl, c.blockHash);
  check(known !== undefined, `${txId}: the headers source does not know block ${c.blockHash}`);
  same(known.merkleroot, root, `${txId}: the headers source's merkle root of ${c.blockHash}`);
  const path = merklePathOf(p, known.height);
  same(path.computeRoot(txId), root, `${txId}: MerklePath.computeRoot`);
  check(await path.verify(txId, headersTracker(headersUrl)), `${txId}: MerklePath.verify against the headers source`);
  return known.height;
}
