import {
  blockHash as hashOfHeader,
  meetsTarget,
  parseHeader,
  sha256d,
  targetFromBits,
  toDisplayHex,
  verifyTscProof,
} from '@proofline/chain-domain';
import type { HeadersSource, SpvCodec } from '@proofline/chain-domain';
import { applyEncoding, parseEncodeParam } from '@proofline/records-domain';
import type { EncodeStep, Receipt } from '@proofline/records-domain';
import { AppError } from '@proofline/shared-errors';

/** The checks of a receipt, in the order they run; the first that fails is named. */
export const RECEIPT_CHECKS = [
  'TX_ID',
  'BLOCK_HASH',
  'PROOF_OF_WORK',
  'MERKLE_PROOF',
  'BEEF',
  'CONTENT',
  'HEADERS_SOURCE',
] as const;
export type ReceiptCheck = (typeof RECEIPT_CHECKS)[number];

/** What each check establishes (printed by the CLI). */
export const RECEIPT_CHECK_MEANING: Readonly<Record<ReceiptCheck, string>> = {
  TX_ID: 'the raw transaction hashes to txId',
  BLOCK_HASH: 'the block header hashes to blockHash',
  PROOF_OF_WORK: 'the block header meets its own proof-of-work target',
  MERKLE_PROOF: "the Merkle proof of txId computes the block header's Merkle root",
  BEEF: 'the BEEF holds the same transaction with a Merkle path to the same root at blockHeight',
  CONTENT: "the transaction's data output carries exactly the given content after encoding",
  HEADERS_SOURCE: 'the headers service knows blockHash at blockHeight on its chain',
};

/** What a receipt alone cannot prove (the CLI prints it and the README repeats it). */
export const RECEIPT_LIMITS =
  'A receipt does not prove that its block is on the longest chain: compare blockHash with a block explorer or headers service (or pass --headers-url).';

/**
 * The two values a check compared, as shown to a person (hex, numbers as text): what the receipt
 * (or the header, the node, the user) claims, and what the verifier computed from the bytes.
 */
export interface ReceiptComparison {
  readonly label: string;
  readonly expected: string;
  readonly computed: string;
}

/** Per check that ran (passed or failed), the values it compared, in the order it compared them. */
export type ReceiptComparisons = Partial<Record<ReceiptCheck, readonly ReceiptComparison[]>>;

export type ReceiptVerdict =
  | { readonly valid: true; readonly passed: readonly ReceiptCheck[]; readonly compared: ReceiptComparisons }
  | {
      readonly valid: false;
      readonly passed: readonly ReceiptCheck[];
      readonly failed: ReceiptCheck;
      readonly detail: string;
      readonly compared: ReceiptComparisons;
    };

export interface VerifyReceiptOptions {
  readonly spv: SpvCodec;
  /** The record's original content: checked against the data output after encoding. */
  readonly content?: Uint8Array;
  /** The `encode` chain with salts (e.g. `SHA256(s4lt)|Base64`); default: the receipt's steps without salts. */
  readonly encode?: string;
  /** A headers service to check that the block is known on its chain (the only networked check). */
  readonly headers?: Pick<HeadersSource, 'headerByHash'>;
}

class Failed extends Error {
  constructor(
    readonly check: ReceiptCheck,
    detail: string,
  ) {
    super(detail);
  }
}

/**
 * Checks a parsed receipt (see `Receipt` in records-domain) without any service: every check in
 * {@link RECEIPT_CHECKS} order; CONTENT only with `content`, HEADERS_SOURCE only with `headers`.
 * Failures are data; a bad `encode` throws AppError 400 ENCODE_PARAM_INVALID/UNKNOWN_ENCODER.
 */
export async function verifyReceipt(receipt: Receipt, opts: VerifyReceiptOptions): Promise<ReceiptVerdict> {
  const passed: ReceiptCheck[] = [];
  const compared: Partial<Record<ReceiptCheck, ReceiptComparison[]>> = {};
  const note = (check: ReceiptCheck, label: string, expected: string, computed: string): void => {
    (compared[check] ??= []).push({ label, expected, computed });
  };
  const steps =
    opts.encode === undefined
      ? undefined
      : parseEncodeParam(opts.encode, { available: ['SHA256', 'Base64'], unencodedAllowed: true });
  try {
    const raw = Buffer.from(receipt.rawTx, 'hex');
    const computed = toDisplayHex(sha256d(raw));
    note('TX_ID', 'txId', receipt.txId, computed);
    if (computed !== receipt.txId) throw new Failed('TX_ID', `rawTx hashes to ${computed}, not ${receipt.txId}`);
    passed.push('TX_ID');

    const hash = hashOfHeader(receipt.blockHeader);
    note('BLOCK_HASH', 'block hash', receipt.blockHash, hash);
    if (hash !== receipt.blockHash)
      throw new Failed('BLOCK_HASH', `blockHeader hashes to ${hash}, not ${receipt.blockHash}`);
    passed.push('BLOCK_HASH');

    const header = parseHeader(receipt.blockHeader);
    note('PROOF_OF_WORK', 'hash ≤ target', targetFromBits(header.bits).toString(16).padStart(64, '0'), hash);
    if (!meetsTarget(header))
      throw new Failed('PROOF_OF_WORK', `block ${hash} does not meet its target (bits ${header.bits.toString(16)})`);
    passed.push('PROOF_OF_WORK');

    if (receipt.merkleProof.target !== receipt.blockHeader)
      throw new Failed('MERKLE_PROOF', 'merkleProof.target is not blockHeader');
    const proof = verifyTscProof(receipt.merkleProof, receipt.txId);
    note('MERKLE_PROOF', 'Merkle root', header.merkleRoot, proof.root ?? `(none: ${proof.valid ? '' : proof.reason})`);
    if (!proof.valid)
      throw new Failed(
        'MERKLE_PROOF',
        `${proof.reason}${proof.root ? ` (computed ${proof.root}, header has ${header.merkleRoot})` : ''}`,
      );
    passed.push('MERKLE_PROOF');

    let beef;
    try {
      beef = opts.spv.readBeef(receipt.beef);
    } catch (e) {
      throw new Failed('BEEF', `beef does not parse: ${(e as Error).message}`);
    }
    note('BEEF', 'txId', receipt.txId, beef.txId);
    note('BEEF', 'block height', String(receipt.blockHeight), String(beef.blockHeight));
    note('BEEF', 'Merkle root', header.merkleRoot, beef.merkleRoot);
    if (beef.txId !== receipt.txId || beef.rawTx.toLowerCase() !== receipt.rawTx)
      throw new Failed('BEEF', `the BEEF's transaction is ${beef.txId}, not the receipt's`);
    if (beef.blockHeight !== receipt.blockHeight)
      throw new Failed('BEEF', `the BEEF's Merkle path is for height ${beef.blockHeight}, not ${receipt.blockHeight}`);
    if (beef.merkleRoot !== header.merkleRoot)
      throw new Failed(
        'BEEF',
        `the BEEF's Merkle path computes ${beef.merkleRoot}, the header has ${header.merkleRoot}`,
      );
    passed.push('BEEF');

    if (opts.content !== undefined) {
      checkContent(receipt, opts.spv, opts.content, steps, (label, expected, computed) =>
        note('CONTENT', label, expected, computed),
      );
      passed.push('CONTENT');
    }

    if (opts.headers) {
      const known = await opts.headers.headerByHash(receipt.blockHash);
      note(
        'HEADERS_SOURCE',
        'height of blockHash',
        String(receipt.blockHeight),
        known ? `${known.height}${known.confirmations < 0 ? ' (not on the main chain)' : ''}` : '(unknown block)',
      );
      if (!known) throw new Failed('HEADERS_SOURCE', `the headers service does not know block ${receipt.blockHash}`);
      if (known.confirmations < 0)
        throw new Failed(
          'HEADERS_SOURCE',
          `block ${receipt.blockHash} is no longer on the headers service's main chain`,
        );
      if (known.height !== receipt.blockHeight)
        throw new Failed(
          'HEADERS_SOURCE',
          `the headers service has block ${receipt.blockHash} at height ${known.height}, not ${receipt.blockHeight}`,
        );
      if (known.headerHex.toLowerCase() !== receipt.blockHeader)
        throw new Failed('HEADERS_SOURCE', 'the headers service serves another header for this block hash');
      passed.push('HEADERS_SOURCE');
    }
  } catch (e) {
    if (e instanceof Failed) return { valid: false, passed, failed: e.check, detail: e.message, compared };
    if (e instanceof AppError) throw e;
    const next = RECEIPT_CHECKS.find((c) => !passed.includes(c)) ?? 'TX_ID';
    return { valid: false, passed, failed: next, detail: e instanceof Error ? e.message : String(e), compared };
  }
  return { valid: true, passed, compared };
}

function checkContent(
  receipt: Receipt,
  spv: SpvCodec,
  content: Uint8Array,
  steps: EncodeStep[] | undefined,
  note: (label: string, expected: string, computed: string) => void,
): void {
  const chain: EncodeStep[] = steps ?? receipt.encoding.map((encoder) => ({ encoder }));
  const names = chain.map((s) => s.encoder).join('|') || 'none';
  const expected = receipt.encoding.join('|') || 'none';
  note('encoding', expected, names);
  if (names !== expected)
    throw new Failed('CONTENT', `--encode names ${names}, the record was encoded with ${expected}`);
  let data: Uint8Array | null;
  try {
    data = spv.recordData(receipt.rawTx).data;
  } catch (e) {
    throw new Failed('CONTENT', `the transaction does not parse: ${(e as Error).message}`);
  }
  if (data === null) throw new Failed('CONTENT', 'the transaction has no data output (a delete carries no content)');
  const encoded = applyEncoding(chain, content).bytes;
  note('data output (hex)', Buffer.from(data).toString('hex'), Buffer.from(encoded).toString('hex'));
  if (!Buffer.from(encoded).equals(Buffer.from(data))) {
    const salted = chain.some((s) => s.salt !== undefined);
    throw new Failed(
      'CONTENT',
      `the data output does not carry this content after ${names}${salted ? '' : ' (if salts were used, pass them in --encode)'}`,
    );
  }
}
