import { Transaction, Utils } from '@bsv/sdk';
import { sha256d, toDisplayHex } from '@proofline/chain-domain';
import { decodeHeaderScript } from './scripts';
import type { RecordHeader } from './scripts';

export interface ParsedInput {
  readonly txId: string;
  readonly vout: number;
  readonly sequence: number;
  readonly unlockingScriptHex: string;
}

export interface ParsedOutput {
  readonly vout: number;
  readonly satoshis: number;
  readonly scriptHex: string;
}

export interface ParsedTransaction {
  readonly txId: string;
  readonly version: number;
  readonly lockTime: number;
  readonly inputs: readonly ParsedInput[];
  readonly outputs: readonly ParsedOutput[];
  readonly isCoinbase: boolean;
  /** Output 0 decoded when it is a Proofline record header, else null. */
  readonly recordHeader: RecordHeader | null;
}

/** A raw transaction that does not parse. */
export class InvalidTransactionError extends Error {
  override readonly name = 'InvalidTransactionError';
}

const NULL_TXID = '0'.repeat(64);

/**
 * Parses a serialized transaction (hex) into plain, strictly typed data; the txId is computed
 * from the bytes (reversed sha256d).
 * @throws InvalidTransactionError on bad hex, truncated or trailing bytes, or no inputs/outputs.
 */
export function parseTransaction(rawHex: string): ParsedTransaction {
  if (rawHex.length === 0 || rawHex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(rawHex))
    throw new InvalidTransactionError('not hex');
  const bytes = Buffer.from(rawHex, 'hex');
  let tx: Transaction;
  const reader = new Utils.ReaderUint8Array(Uint8Array.from(bytes));
  try {
    tx = Transaction.fromReader(reader);
  } catch (e) {
    throw new InvalidTransactionError(`unparseable transaction: ${(e as Error).message}`);
  }
  // The sdk's reader does not fail on a short read; the position tells truncation and trailing bytes.
  if (reader.pos !== bytes.length)
    throw new InvalidTransactionError(
      reader.pos > bytes.length ? 'truncated transaction' : 'trailing bytes after the transaction',
    );
  if (tx.inputs.length === 0 || tx.outputs.length === 0)
    throw new InvalidTransactionError('a transaction needs inputs and outputs');
  const inputs = tx.inputs.map((i): ParsedInput => ({
    txId: i.sourceTXID ?? NULL_TXID,
    vout: i.sourceOutputIndex,
    sequence: i.sequence ?? 0xffffffff,
    unlockingScriptHex: i.unlockingScript?.toHex() ?? '',
  }));
  const outputs = tx.outputs.map((o, vout): ParsedOutput => ({
    vout,
    satoshis: o.satoshis ?? 0,
    scriptHex: o.lockingScript.toHex(),
  }));
  const first = tx.outputs[0];
  return {
    txId: toDisplayHex(sha256d(bytes)),
    version: tx.version,
    lockTime: tx.lockTime,
    inputs,
    outputs,
    isCoinbase: inputs.length === 1 && inputs[0]?.txId === NULL_TXID && inputs[0].vout === 0xffffffff,
    recordHeader: first ? decodeHeaderScript(first.lockingScript.toUint8Array()) : null,
  };
}
