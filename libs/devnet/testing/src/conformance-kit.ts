// Shared by the conformance specs (not a spec itself: jest only runs *.spec.ts): a devnet node
// behind an API key whose coinbases pay a test key, and transactions the sdk builds and signs.
import { FetchHttpClient, LockingScript, P2PKH, PrivateKey, SatoshisPerKilobyte, Transaction } from '@bsv/sdk';
import type { HttpClient } from '@bsv/sdk';
import type { RedisClient } from '@proofline/shared-redis';
import { nodeTestKit } from '@proofline/devnet';
import type { DevnetNode } from '@proofline/devnet';

export const CONFORMANCE_API_KEY = 'conformance-key';
export const conformanceKey = PrivateKey.fromHex('33'.repeat(32));
export const conformanceScriptHex = new P2PKH().lock(conformanceKey.toAddress()).toHex();

/** The node under the test's prefix, every /v1 call behind `Authorization: Bearer CONFORMANCE_API_KEY`. */
export function startConformanceNode(redis: RedisClient, prefix: string): Promise<DevnetNode> {
  return nodeTestKit.startTestNode(redis, prefix, {
    coinbaseLockingScriptHex: conformanceScriptHex,
    apiKey: CONFORMANCE_API_KEY,
  });
}

/** The coinbase of the main-chain block at `height` (the node mines blocks 0 and 1 at start: 0's is mature). */
export async function coinbaseAt(node: DevnetNode, height: number): Promise<Transaction> {
  const res = await fetch(`${node.url}/block/height/${height}/coinbase`);
  if (res.status !== 200) throw new Error(`no coinbase at height ${height}: HTTP ${res.status}`);
  return Transaction.fromHex(((await res.json()) as { hex: string }).hex);
}

/**
 * A transaction built and signed by the sdk: spends `vout` of `parent` (locked to the conformance
 * key) into `outputs` outputs of `each` satoshis to the same key, change back to it, fee by the sdk's
 * `SatoshisPerKilobyte` at `satsPerKb` (0: no fee at all).
 */
export async function sdkSpend(
  parent: Transaction,
  vout: number,
  {
    outputs = 1,
    each = 1_000,
    satsPerKb = 1,
    signer = conformanceKey,
  }: { outputs?: number; each?: number; satsPerKb?: number; signer?: PrivateKey } = {},
): Promise<Transaction> {
  const tx = nodeTestKit.transactionSpending(parent, vout, signer);
  const lockingScript = LockingScript.fromHex(conformanceScriptHex);
  for (let i = 0; i < outputs; i++) tx.addOutput({ satoshis: each, lockingScript });
  if (satsPerKb > 0) {
    tx.addOutput({ lockingScript, change: true });
    await tx.fee(new SatoshisPerKilobyte(satsPerKb));
  } else {
    const total = parent.outputs[vout]?.satoshis ?? 0;
    tx.addOutput({ satoshis: total - outputs * each, lockingScript });
  }
  await tx.sign();
  return tx;
}

/** fetch() with the node's Bearer key; the body parsed as JSON whatever the content type. */
export async function arcCall(
  node: DevnetNode,
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; type: string; body: unknown }> {
  const res = await fetch(`${node.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${CONFORMANCE_API_KEY}`, ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the contract checks then fail on the raw text
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', body };
}

/**
 * The supported way to point the sdk's `WhatsOnChain` chain tracker at another host: its
 * constructor hard-codes `https://api.whatsonchain.com/v1/bsv/<network>` but takes an
 * `httpClient`. This is the sdk's own `FetchHttpClient` over a fetch that rewrites that prefix to
 * `base`: everything else (headers, JSON parsing, status handling) stays the sdk's. `seen`
 * records every URL asked, so a spec can show the node answered.
 */
export function rewritingHttpClient(base: string): { readonly client: HttpClient; readonly seen: string[] } {
  const seen: string[] = [];
  const wocPrefix = /^https:\/\/api\.whatsonchain\.com\/v1\/bsv\/(?:main|test|stn)/;
  const client = new FetchHttpClient((url, options) => {
    const target = url.replace(wocPrefix, base);
    seen.push(target);
    return fetch(target, options);
  });
  return { client, seen };
}
