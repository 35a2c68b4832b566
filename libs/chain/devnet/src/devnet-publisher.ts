import type { Redis } from 'ioredis';
import { InvalidTransactionError, faucetTxId, parseTransaction } from '@proofline/chain-bsv';
import type { ParsedTransaction } from '@proofline/chain-bsv';
import { fromScriptReply } from '@proofline/shared-redis';
import { devnetCommands } from './commands';
import type { DevnetCommands } from './commands';
import { devnetKeys, outpointField } from './keys';
import { SUBMIT_TX_REPLIES } from './script-replies';
import type { DevnetKeys } from './keys';

/** An output is spendable unless it is a data output (`OP_RETURN` / `OP_FALSE OP_RETURN`). */
export function isSpendableScript(scriptHex: string): boolean {
  return !scriptHex.startsWith('6a') && !scriptHex.startsWith('006a');
}

/** What the pre-ARC devnet's mempool door answers (its own shape: it is not a `ChainPublisher`). */
export type DevnetSubmitResult =
  | { readonly status: 'accepted' }
  | { readonly status: 'already-known' }
  | {
      readonly status: 'rejected';
      readonly code: 'DOUBLE_SPEND' | 'INVALID_TX' | 'MISSING_INPUT';
      readonly detail: string;
    };

/**
 * The devnet's mempool door. Validates the raw transaction (it parses, its txId is the one
 * claimed, it is not a coinbase), then in one Lua call: idempotent by txId, rejects a second spend
 * of an outpoint (DOUBLE_SPEND) and an input spending nothing known (MISSING_INPUT) unless it is
 * the faucet outpoint named by the transaction's own funding nonce, then adds it to the mempool.
 * Scripts and amounts are not evaluated (a devnet; see the docs).
 */
export class DevnetPublisher {
  private readonly keys: DevnetKeys;
  private readonly commands: DevnetCommands;

  constructor(redis: Redis, prefix: string) {
    this.keys = devnetKeys(prefix);
    this.commands = devnetCommands(redis);
  }

  /** `rawTx` as built (`BuiltTransaction`), or `rawHex` as the pre-ARC devnet's own specs send it. */
  async submit(
    sent: { readonly txId: string; readonly rawTx: Uint8Array } | { readonly txId: string; readonly rawHex: string },
  ): Promise<DevnetSubmitResult> {
    const tx = { txId: sent.txId, rawHex: 'rawHex' in sent ? sent.rawHex : Buffer.from(sent.rawTx).toString('hex') };
    let parsed: ParsedTransaction;
    try {
      parsed = parseTransaction(tx.rawHex);
    } catch (e) {
      if (e instanceof InvalidTransactionError) return { status: 'rejected', code: 'INVALID_TX', detail: e.message };
      throw e;
    }
    if (parsed.txId !== tx.txId)
      return {
        status: 'rejected',
        code: 'INVALID_TX',
        detail: `txId ${tx.txId} does not match the transaction (${parsed.txId})`,
      };
    if (parsed.isCoinbase) return { status: 'rejected', code: 'INVALID_TX', detail: 'a coinbase cannot be submitted' };

    const faucet = parsed.recordHeader ? faucetTxId(parsed.recordHeader.fundingNonce) : null;
    const inputs = parsed.inputs.flatMap((i) => [
      outpointField(i.txId, i.vout),
      i.txId === faucet && i.vout === 0 ? '1' : '0',
    ]);
    const spendable = parsed.outputs.filter((o) => isSpendableScript(o.scriptHex));
    const outputs = spendable.flatMap((o) => [outpointField(parsed.txId, o.vout), String(o.satoshis)]);
    const k = this.keys;
    const [status, a, b] = await this.commands.submitTx(
      k.raw,
      k.spent,
      k.outputs,
      k.mempool,
      k.seq,
      parsed.txId,
      tx.rawHex,
      String(parsed.inputs.length),
      ...inputs,
      String(spendable.length),
      ...outputs,
    );
    switch (fromScriptReply('submit-tx-5.lua', SUBMIT_TX_REPLIES, status)) {
      case 'accepted':
        return { status: 'accepted' };
      case 'already-known':
        return { status: 'already-known' };
      case 'DOUBLE_SPEND':
        return { status: 'rejected', code: 'DOUBLE_SPEND', detail: `outpoint ${a} is already spent by ${b}` };
      case 'MISSING_INPUT':
        return { status: 'rejected', code: 'MISSING_INPUT', detail: `input ${a} spends no known output` };
    }
  }
}
