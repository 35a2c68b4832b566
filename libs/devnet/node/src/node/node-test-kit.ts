/* eslint-disable @typescript-eslint/no-explicit-any */
// Shared by the node specs and by the specs that drive the node from other libs (exported as
// `nodeTestKit`; not a spec itself: jest only runs *.spec.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LockingScript, MerklePath, P2PKH, PrivateKey, Transaction } from '@bsv/sdk';
import type { RedisClient } from '@proofline/shared-redis';
import { startDevnetNode } from './devnet-node';
import type { DevnetNode, DevnetNodeOptions } from './devnet-node';

export const testKey = PrivateKey.fromHex('11'.repeat(32));
export const otherKey = PrivateKey.fromHex('22'.repeat(32));
export const testScriptHex = new P2PKH().lock(testKey.toAddress()).toHex();

/** The signature-check specs' keys: `signerKey` locks `signerLock`; `otherSigner` signs where it must not. */
export const signerKey = PrivateKey.fromHex('44'.repeat(32));
export const otherSigner = PrivateKey.fromHex('55'.repeat(32));
export const signerLock = new P2PKH().lock(signerKey.toAddress());
/** The order of secp256k1's group: `N - s` is the high-S twin of a signature's `s`. */
export const SECP256K1_N = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');

/** A node on an ephemeral port with its keys under `prefix` (`devnetKeys(prefix)`), coinbases to the test key, mining only on demand. */
export function startTestNode(
  redis: RedisClient,
  prefix: string,
  extra: Partial<DevnetNodeOptions> = {},
): Promise<DevnetNode> {
  return startDevnetNode({
    redis,
    prefix,
    port: 0,
    coinbaseLockingScriptHex: testScriptHex,
    blockIntervalMs: 0,
    callbackRetryBaseMs: 20,
    ...extra,
  });
}

export async function getJson(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: any; type: string }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body, type: res.headers.get('content-type') ?? '' };
}

export function postTx(
  base: string,
  body: string | Buffer,
  type = 'application/json',
  headers: Record<string, string> = {},
) {
  return getJson(`${base}/v1/tx`, {
    method: 'POST',
    headers: { 'Content-Type': type, ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
}

export async function coinbaseTx(base: string, height: number): Promise<Transaction> {
  const { status, body } = await getJson(`${base}/block/height/${height}/coinbase`);
  if (status !== 200) throw new Error(`no coinbase at ${height}: ${status}`);
  return Transaction.fromHex(body.hex as string);
}

/** A new transaction whose one input spends `vout` of `parent` (P2PKH) unlocked by `signer`; outputs and signing are the caller's. */
export function transactionSpending(parent: Transaction, vout: number, signer: PrivateKey): Transaction {
  const tx = new Transaction();
  tx.addInput({
    sourceTransaction: parent,
    sourceOutputIndex: vout,
    unlockingScriptTemplate: new P2PKH().unlock(signer),
  });
  return tx;
}

/** Spends `vout` of `parent` (locked to `testKey`) into `outs`, signed by `signer`. */
export async function spend(
  parent: Transaction,
  vout: number,
  outs: { satoshis: number; scriptHex?: string }[],
  signer: PrivateKey = testKey,
): Promise<Transaction> {
  const tx = transactionSpending(parent, vout, signer);
  for (const o of outs)
    tx.addOutput({ satoshis: o.satoshis, lockingScript: LockingScript.fromHex(o.scriptHex ?? testScriptHex) });
  await tx.sign();
  return tx;
}

/** Splits a 50-coin coinbase into `n` outputs of `each` satoshis to the test key plus change (fee 1000). */
export async function split(coinbase: Transaction, n: number, each = 100_000): Promise<Transaction> {
  const total = coinbase.outputs[0]!.satoshis!;
  return spend(coinbase, 0, [
    ...Array.from({ length: n }, () => ({ satoshis: each })),
    { satoshis: total - n * each - 1000 },
  ]);
}

export function bumpRoot(bumpHex: string, txId: string): string {
  return MerklePath.fromHex(bumpHex).computeRoot(txId);
}

/** A loopback receiver that records every request (and can be told to fail the first N). */
export function callbackReceiver(failFirst = 0) {
  return callbackReceiverOn(0, failFirst);
}

/** {@link callbackReceiver} on a given port (0 = ephemeral). */
export async function callbackReceiverOn(listenPort: number, failFirst = 0) {
  const received: { auth: string | undefined; body: any }[] = [];
  let failures = failFirst;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (failures > 0) {
        failures -= 1;
        res.writeHead(500).end();
        return;
      }
      received.push({ auth: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(listenPort, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callbacks`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
