import { Transaction, Utils } from '@bsv/sdk';
import type { BeefContents, ProvenTransaction, RecordData, SpvCodec } from '@proofline/chain-domain';
import { tscToMerklePath } from './merkle-path';
import { parseTransaction } from './parse-transaction';
import { DATA_VOUT, readDataPushes } from './scripts';

/**
 * The `@bsv/sdk` implementation of {@link SpvCodec}. Receipts carry **Atomic BEEF** (BRC-95:
 * `01010101`, the subject txId, then a BEEF holding that transaction and its BUMP): it names
 * its subject, so a wallet cannot mistake which transaction it proves, and `Transaction.fromBEEF`
 * / `fromAtomicBEEF` read it. A proven transaction needs no ancestors in a BEEF.
 */
export class BsvSpvCodec implements SpvCodec {
  toBeef(proven: ProvenTransaction): string {
    const tx = Transaction.fromBinary(proven.rawTx);
    const path = tscToMerklePath(proven.proof, proven.blockHeight);
    // Leaves in offset order, as the sdk writes them after a parse: the same BEEF bytes either way.
    for (const level of path.path) level.sort((a, b) => a.offset - b.offset);
    tx.merklePath = path;
    return Utils.toHex(tx.toAtomicBEEF());
  }

  readBeef(hex: string): BeefContents {
    if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) throw new Error('BEEF is not hex');
    const tx = Transaction.fromBEEF(Utils.toArray(hex, 'hex'));
    const path = tx.merklePath;
    if (!path) throw new Error('the BEEF subject has no Merkle path');
    const txId = tx.id('hex');
    return { txId, rawTx: tx.toHex(), blockHeight: path.blockHeight, merkleRoot: path.computeRoot(txId) };
  }

  recordData(rawTx: string): RecordData {
    const parsed = parseTransaction(rawTx);
    const script = parsed.outputs[DATA_VOUT]?.scriptHex;
    const pushes = script === undefined ? null : readDataPushes(Buffer.from(script, 'hex'));
    return {
      data: pushes && pushes.length === 1 ? (pushes[0] as Buffer) : null,
      contentType: parsed.recordHeader?.contentType ?? null,
    };
  }
}
