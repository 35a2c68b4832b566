import type { FundingUtxo } from './ports';

const TX_ID = /^[0-9a-f]{64}$/;

/** `txId:vout`, the member name of an outpoint in every pool structure. */
export function toOutpoint(utxo: { readonly txId: string; readonly vout: number }): string {
  return `${utxo.txId}:${utxo.vout}`;
}

/** Checks a UTXO's fields; throws on a malformed one (a programming error or bad operator input). */
export function assertUtxo(utxo: FundingUtxo): void {
  if (!TX_ID.test(utxo.txId))
    throw new TypeError(`bad txId ${JSON.stringify(utxo.txId)} (64 lowercase hex characters)`);
  if (!Number.isSafeInteger(utxo.vout) || utxo.vout < 0 || utxo.vout > 0xffffffff)
    throw new TypeError(`bad vout ${utxo.vout}`);
  if (!Number.isSafeInteger(utxo.satoshis) || utxo.satoshis < 1) throw new TypeError(`bad satoshis ${utxo.satoshis}`);
}

/** Parses `outpoint` + satoshis as the scripts return them. */
export function fromOutpoint(outpoint: string, satoshis: string | number): FundingUtxo {
  const i = outpoint.lastIndexOf(':');
  return { txId: outpoint.slice(0, i), vout: Number(outpoint.slice(i + 1)), satoshis: Number(satoshis) };
}

/**
 * Parses the operator's `TXID:VOUT:SATS` (the CLI's `wallet import`).
 * @throws TypeError naming what is wrong.
 */
export function parseUtxoSpec(spec: string): FundingUtxo {
  const m = /^([0-9a-fA-F]{64}):(\d{1,10}):(\d{1,16})$/.exec(spec.trim());
  if (!m) throw new TypeError(`"${spec}" is not TXID:VOUT:SATS (64 hex characters, output index, satoshis)`);
  const utxo = { txId: (m[1] as string).toLowerCase(), vout: Number(m[2]), satoshis: Number(m[3]) };
  assertUtxo(utxo);
  return utxo;
}

/** Pool ARGV form of inputs: outpoints joined by ','. */
export const inputsArg = (utxos: readonly FundingUtxo[]): string => utxos.map(toOutpoint).join(',');

/** Pool ARGV form of outputs: `outpoint=satoshis` joined by ','. */
export const outputsArg = (utxos: readonly FundingUtxo[]): string =>
  utxos.map((u) => `${toOutpoint(u)}=${u.satoshis}`).join(',');
