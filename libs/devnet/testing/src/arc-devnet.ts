import { LockingScript, P2PKH, Transaction } from '@bsv/sdk';
import type { RedisClient } from '@proofline/shared-redis';
import { resolvePartitions } from '@proofline/shared-redis';
import {
  confirmationOptions,
  createArcChain,
  runConfirmationPass,
  startConfirmationWorker,
} from '@proofline/chain-arc';
import type { Refusal } from '@proofline/chain-domain';
import type {
  ArcChain,
  ConfirmationPassDeps,
  ConfirmationPassReport,
  RunningConfirmationWorker,
} from '@proofline/chain-arc';
import { deriveChainKeys } from '@proofline/chain-bsv';
import { COINBASE_MATURITY, STRICT_ARC, TEST_REALITIES, startDevnetNode } from '@proofline/devnet';
import type { ArcRealities, ArcStrictness, DevnetNode } from '@proofline/devnet';
import { FundingPool, fundingIdentity } from '@proofline/chain-wallet';
import type { FundingIdentity, FundingUtxo } from '@proofline/chain-wallet';
import { DEVNET_WALLET_SEED } from '@proofline/shared-config';
import type { Config } from '@proofline/shared-config';

/** What the confirmation pass needs from the records scope (records-publication's `rawTxOf` and `refusedWhileConfirming` fit). */
export interface RecordHooks {
  readonly rawTxOf: (txIds: readonly string[]) => Promise<(Uint8Array | null)[]>;
  readonly onRefused: (refusal: Refusal) => Promise<void>;
  /** Watched transactions seen or mined (records-publication's `seenWhileConfirming` fits). */
  readonly onSeen?: (txIds: readonly string[]) => Promise<void>;
  /** Watched transactions ARC holds below SEEN_ON_NETWORK (records-publication's `heldWhileConfirming` fits). */
  readonly onHeld?: (txIds: readonly string[]) => Promise<void>;
}

export interface ArcDevnetOptions {
  /** The test's command connection (never closed here). */
  readonly redis: RedisClient;
  /**
   * Records partitions the pool is sharded by: the service's `REDIS_PARTITIONS` (default what an
   * unset one resolves to on `redis`, so that a service started on `env` funds its writes from
   * this pool's shards).
   */
  readonly partitions?: number;
  /** The service's (test's) key prefix; the node keeps its state under `<prefix>:{devnet}` (`devnetKeys`). */
  readonly prefix: string;
  /** WALLET_SEED (default the public devnet seed, as in the default configuration). */
  readonly seed?: string;
  /** The node mines every this many ms (default 0: only on `mineBlock()`). */
  readonly blockIntervalMs?: number;
  /** ARC_POLL_MS of the confirmation worker (default 100). */
  readonly pollMs?: number;
  /** The node requires this Bearer key (ARC_API_KEY). */
  readonly apiKey?: string;
  /** Callback settings handed to the service (ARC_CALLBACK_URL / ARC_CALLBACK_TOKEN). */
  readonly callback?: { readonly url: string; readonly token: string };
  /** ARC_CALLBACK_GRACE_MS of the returned configuration (default 0: poll every watched tx, as before callbacks had a grace). */
  readonly callbackGraceMs?: number;
  /** Over {@link ARC_DEVNET_STRICTNESS}: how strictly the node holds the service to ARC's code. */
  readonly strictness?: Partial<ArcStrictness>;
  /** Over {@link ARC_DEVNET_REALITIES}: ARC's timing and double-spend realities. */
  readonly realities?: Partial<ArcRealities>;
}

/**
 * The node's strictness for every spec that starts it here: ARC's code (`STRICT_ARC`). A spec
 * that needs a lenient node passes `strictness` and says why.
 */
export const ARC_DEVNET_STRICTNESS: ArcStrictness = STRICT_ARC;
/**
 * The node's realities for every spec that starts it here: every reality on (`TEST_REALITIES`),
 * so the service is tested against ARC's timings and double-spend marking. A spec that needs
 * another passes `realities` and says why.
 */
export const ARC_DEVNET_REALITIES: ArcRealities = TEST_REALITIES;

export interface ArcDevnet {
  /** The ARC-compatible devnet node, over real HTTP on 127.0.0.1 (port 0). */
  readonly node: DevnetNode;
  /** Environment for `loadConfig` so the service under test talks to this node (ARC_URL, HEADERS_URL, ARC_POLL_MS, …). */
  readonly env: Readonly<Record<string, string>>;
  /** `config.chain` for that environment. */
  readonly chainConfig: Config['chain'];
  /** A chain scope on the test's connection (the worker side of the fixture). */
  readonly chain: ArcChain;
  /** The funding wallet's pool under the prefix, and the wallet's identity. */
  readonly pool: FundingPool;
  readonly funding: FundingIdentity;
  /**
   * Funds the pool with `count` real UTXOs of `satoshis` (default 100 × 1000): takes a matured
   * coinbase the node paid to the funding script, splits it in a transaction submitted to the
   * node (accepted, so its outputs are spendable), and adds the outputs to the pool.
   */
  fund(count?: number, satoshis?: number, options?: { readonly addToPool?: boolean }): Promise<FundingUtxo[]>;
  /** Raw hex of a funding split made by `fund` (the parent of its UTXOs). */
  splitHex(txId: string): string;
  /** The funding key's signer (WIF-free: the sdk PrivateKey), for specs that spend pool UTXOs themselves. */
  readonly fundingKey: ReturnType<typeof deriveChainKeys>['funding']['privateKey'];
  /** Starts the production confirmation worker (BullMQ job scheduler every ARC_POLL_MS) on `bull`. */
  startConfirmations(bull: RedisClient, hooks: RecordHooks): Promise<RunningConfirmationWorker>;
  /** One confirmation pass now (no scheduler). */
  confirmOnce(hooks: RecordHooks): Promise<ConfirmationPassReport>;
  close(): Promise<void>;
}

/**
 * The one test helper of the ARC path: starts the devnet node (`startDevnetNode`, port 0, its
 * coinbases paying the wallet's funding script), gives the configuration pointing the service at
 * it, funds the wallet's pool with real UTXOs, and starts the confirmation worker like
 * apps/worker's chain role. Records specs start the publisher and the confirmations with
 * records-publication's `createPublication` on `chain`, as apps/worker does.
 */
export async function startArcDevnet(o: ArcDevnetOptions): Promise<ArcDevnet> {
  const seed = o.seed ?? DEVNET_WALLET_SEED;
  const keys = deriveChainKeys(seed);
  const funding = fundingIdentity(keys, 'devnet');
  const node = await startDevnetNode({
    redis: o.redis,
    prefix: o.prefix,
    port: 0,
    coinbaseLockingScriptHex: funding.lockingScriptHex,
    blockIntervalMs: o.blockIntervalMs ?? 0,
    ...(o.apiKey ? { apiKey: o.apiKey } : {}),
    callbackRetryBaseMs: 20,
    strictness: { ...ARC_DEVNET_STRICTNESS, ...o.strictness },
    realities: { ...ARC_DEVNET_REALITIES, ...o.realities },
  });
  const pollMs = o.pollMs ?? 100;
  const env: Record<string, string> = {
    ARC_URL: node.url,
    HEADERS_URL: node.url,
    ARC_POLL_MS: String(pollMs),
    ARC_TIMEOUT_MS: '10000',
    ...(o.apiKey ? { ARC_API_KEY: o.apiKey } : {}),
    ...(o.callback ? { ARC_CALLBACK_URL: o.callback.url, ARC_CALLBACK_TOKEN: o.callback.token } : {}),
    ARC_CALLBACK_GRACE_MS: String(o.callbackGraceMs ?? 0),
    ...(o.seed ? { WALLET_SEED: o.seed } : {}),
  };
  const chainConfig: Config['chain'] = {
    network: 'devnet',
    arcUrl: node.url,
    arcApiKey: o.apiKey,
    arcCallbackUrl: o.callback?.url,
    arcCallbackToken: o.callback?.token,
    arcWaitFor: 'STORED',
    arcTimeoutMs: 10_000,
    arcMaxInFlight: 4,
    headersUrl: node.url,
    headersApiKey: undefined,
    headersMaxRps: undefined,
    pollMs,
    callbackGraceMs: o.callbackGraceMs ?? 0,
    orphanMaxBlocks: undefined,
  };
  const chain = createArcChain({ redis: o.redis, prefix: o.prefix, config: chainConfig, seed });
  const pool = new FundingPool(o.redis, {
    prefix: o.prefix,
    address: funding.address,
    partitions: (await resolvePartitions(o.redis, o.prefix, o.partitions)).count,
  });
  let nextCoinbase = 0;
  const splits = new Map<string, string>();
  const workers: RunningConfirmationWorker[] = [];
  const passDeps = (hooks: RecordHooks): ConfirmationPassDeps => ({
    client: chain.client,
    rebroadcast: (txs) => chain.arc.submitMany(txs),
    headers: chain.headers,
    store: chain.store,
    redis: o.redis,
    prefix: o.prefix,
    ...hooks,
  });

  return {
    node,
    env,
    chainConfig,
    chain,
    pool,
    funding,
    async fund(count = 100, satoshis = 1000, options = {}) {
      // A coinbase of height h is spendable once the tip is at least h + COINBASE_MATURITY - 1.
      const height = nextCoinbase++;
      // This coinbase is spent here, outside the pool. A worker on the devnet imports matured
      // coinbases paying the funding key (CoinbaseScanner, from the pool's scan cursor): moved
      // past it first, the cursor keeps it out of the pool, where a write would spend it again
      // (ARC 462: already spent in a block; the slot-migration spec met it now and then).
      await pool.advanceScanHeight(height);
      for (;;) {
        const tip = await chain.headers.tip();
        if (tip.height >= height + COINBASE_MATURITY - 1) break;
        await node.mineBlock();
      }
      const res = await fetch(`${node.url}/block/height/${height}/coinbase`);
      if (res.status !== 200) throw new Error(`arc devnet: no coinbase at height ${height} (${res.status})`);
      const coinbase = Transaction.fromHex(((await res.json()) as { hex: string }).hex);
      const total = coinbase.outputs[0]?.satoshis ?? 0;
      const tx = new Transaction();
      tx.addInput({
        sourceTransaction: coinbase,
        sourceOutputIndex: 0,
        unlockingScriptTemplate: new P2PKH().unlock(keys.funding.privateKey),
      });
      const script = LockingScript.fromHex(funding.lockingScriptHex);
      for (let i = 0; i < count; i++) tx.addOutput({ satoshis, lockingScript: script });
      const fee = Math.ceil((count * 34 + 200) / 1000) * 2 + 10;
      tx.addOutput({ satoshis: total - count * satoshis - fee, lockingScript: script });
      await tx.sign();
      const txId = tx.id('hex');
      const answer = await chain.arc.submit({ txId, rawTx: Uint8Array.from(tx.toEF()) });
      // Held by the node (accepted, or pending other than an orphan): its outputs can fund writes.
      if (answer.kind !== 'accepted' && !(answer.kind === 'pending' && answer.status !== 'SEEN_IN_ORPHAN_MEMPOOL'))
        throw new Error(`arc devnet: the funding split was not accepted: ${JSON.stringify(answer)}`);
      splits.set(txId, tx.toHex());
      const utxos = Array.from({ length: count }, (_, vout) => ({ txId, vout, satoshis }));
      if (options.addToPool !== false) await pool.add(utxos);
      return utxos;
    },
    splitHex(txId) {
      const hex = splits.get(txId);
      if (!hex) throw new Error(`arc devnet: ${txId} is not a funding split`);
      return hex;
    },
    fundingKey: keys.funding.privateKey,
    async startConfirmations(bull, hooks) {
      const running = await startConfirmationWorker({
        connection: bull,
        redis: o.redis,
        redisPrefix: o.prefix,
        pollMs,
        pass: passDeps(hooks),
        options: confirmationOptions(chainConfig),
      });
      workers.push(running);
      return running;
    },
    confirmOnce(hooks) {
      return runConfirmationPass(passDeps(hooks), confirmationOptions(chainConfig));
    },
    async close() {
      for (const w of workers.splice(0)) await w.close().catch(() => undefined);
      await chain.close();
      await node.close();
    },
  };
}
