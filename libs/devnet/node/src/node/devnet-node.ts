import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RedisClient } from '@proofline/shared-redis';
import { systemClock } from '@proofline/shared-config';
import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import type { TxStatusRecord } from './arc-protocol';
import { LENIENT_ARC, NO_REALITIES } from './arc-settings';
import type { ArcRealities, ArcStrictness, Mutable } from './arc-settings';
import { Callbacker } from './callbacks';
import { createHttpHandler } from './http-server';
import type { DevnetFaults } from './http-server';
import { COINBASE_MATURITY, NodeChain } from './node-chain';
import { cachePublicKeyParsing } from './native-checksig';

export interface DevnetNodeOptions {
  /** Command connection, owned by the caller (never closed by the node). */
  redis: RedisClient;
  /** The deployment's key prefix (REDIS_PREFIX): the node's keys are `<prefix>:{devnet}:chain:*` (see `devnetKeys`). */
  prefix: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 = ephemeral. */
  port: number;
  /** Every coinbase pays this script (the service wallet's funding P2PKH). */
  coinbaseLockingScriptHex: string;
  /** 0 = mine only on mineBlock(). */
  blockIntervalMs: number;
  /** When set, /v1/* require `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  /** GET /v1/policy miningFee and the 465 check; default 1 (1 sat / 1000 B). */
  feeSatoshisPerKb?: number;
  clock?: Clock;
  logger?: Logger;
  /** Callback delivery tuning (tests shorten the backoff); attempts default to `strictness.callbackMaxAttempts`. */
  callbackRetryBaseMs?: number;
  callbackMaxAttempts?: number;
  /** How strictly the node holds clients to ARC's code (default LENIENT_ARC; STRICT_ARC is ARC's). */
  strictness?: Partial<ArcStrictness>;
  /** ARC's timing and double-spend realities (default NO_REALITIES: all off). */
  realities?: Partial<ArcRealities>;
}

export interface DevnetNode {
  /** http://host:port */
  readonly url: string;
  /** Mines one block with the whole mempool; queues the MINED callbacks. */
  mineBlock(): Promise<{ hash: string; height: number; txIds: string[] }>;
  /**
   * Replaces the tip block by a sibling at the same height carrying the same txs (new coinbase,
   * different hash); the old hash then reports confirmations -1. Queues new MINED callbacks.
   */
  reorgLastBlock(): Promise<{ oldHash: string; newHash: string; height: number }>;
  /** Mutable switches for tests. */
  readonly faults: DevnetFaults;
  /** The strict behaviours in force, read on every use: a test may change a field between requests. */
  readonly strictness: Mutable<ArcStrictness>;
  /** The realities in force, likewise. */
  readonly realities: Mutable<ArcRealities>;
  /** Stops the timer, the callback loop and the server; leaves the Redis connection open. */
  close(): Promise<void>;
}

export type { DevnetFaults } from './http-server';

/**
 * Starts the devnet as an ARC-compatible node: ARC v1 over HTTP, WhatsOnChain-shaped header and
 * coinbase reads, blocks every `blockIntervalMs` (coinbase to the wallet's script), durable
 * callbacks. On an empty chain it first mines `COINBASE_MATURITY` blocks so the wallet is funded.
 * @throws Error when the port cannot be bound (the timer and loops are not left running).
 */
export async function startDevnetNode(o: DevnetNodeOptions): Promise<DevnetNode> {
  if (!/^([0-9a-fA-F]{2})+$/.test(o.coinbaseLockingScriptHex)) throw new Error('coinbaseLockingScriptHex must be hex');
  const clock = o.clock ?? systemClock;
  const feeSatoshisPerKb = o.feeSatoshisPerKb ?? 1;
  // Every input's public key is parsed twice by the interpreter; the funding key over and over.
  cachePublicKeyParsing();
  const faults: DevnetFaults = { dropCallbacks: false, duplicateCallbacks: false, corruptBump: false };
  const strictness: Mutable<ArcStrictness> = { ...LENIENT_ARC, ...o.strictness };
  const realities: Mutable<ArcRealities> = { ...NO_REALITIES, ...o.realities };
  const chain = new NodeChain({
    redis: o.redis,
    prefix: o.prefix,
    coinbaseLockingScriptHex: o.coinbaseLockingScriptHex.toLowerCase(),
    feeSatoshisPerKb,
    clock,
    corruptBump: () => faults.corruptBump,
    strictness,
    realities,
  });
  const callbacks = new Callbacker({
    redis: o.redis,
    keys: chain.keys,
    clock,
    faults,
    strictness,
    ...(o.logger ? { logger: o.logger } : {}),
    ...(o.callbackRetryBaseMs !== undefined ? { retryBaseMs: o.callbackRetryBaseMs } : {}),
    ...(o.callbackMaxAttempts !== undefined ? { maxAttempts: o.callbackMaxAttempts } : {}),
  });

  // Block production and reorgs are serialized: one chain change at a time in this process
  // (the Lua compare-and-set on the tip keeps the chain linear across processes anyway).
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => undefined);
    return next;
  };
  const notifyMined = async (txIds: readonly string[]): Promise<void> => {
    const records = (await chain.statusMany(txIds)).filter((r): r is TxStatusRecord => r !== null);
    await callbacks.notifyMany(records);
  };
  /** Queues a main-chain block's callbacks, then moves the cursor (a crash in between re-queues them on restart). */
  const notifyBlock = async (hash: string, height: number, txIds: readonly string[]): Promise<void> => {
    await notifyMined(txIds);
    await callbacks.notifyMany(await chain.resolveDoubleSpends(hash, txIds));
    await o.redis.set(chain.keys.callbackHeight, String(height));
  };
  const mineBlock = () =>
    serial(async () => {
      const block = await chain.mineBlock();
      await notifyBlock(block.hash, block.height, block.txIds.slice(1));
      o.logger?.debug({ hash: block.hash, height: block.height, txs: block.txIds.length - 1 }, 'devnet block mined');
      return block;
    });
  const reorgLastBlock = () =>
    serial(async () => {
      const r = await chain.reorgLastBlock();
      await notifyMined(r.txIds.slice(1));
      o.logger?.info({ oldHash: r.oldHash, newHash: r.newHash, height: r.height }, 'devnet reorg of the tip block');
      return { oldHash: r.oldHash, newHash: r.newHash, height: r.height };
    });

  // Regtest-style funding: an empty chain gets COINBASE_MATURITY blocks (heights 0..maturity-1),
  // so the genesis coinbase is spendable at once.
  while ((await chain.tipHeight()) < COINBASE_MATURITY - 1) await mineBlock();
  // Blocks committed by a node that stopped before queuing their callbacks: queue them now.
  await serial(async () => {
    const tip = await chain.tipHeight();
    const cursor = await o.redis.get(chain.keys.callbackHeight);
    for (let h = cursor === null ? tip + 1 : Number(cursor) + 1; h <= tip; h++) {
      const block = await chain.blockAt(h);
      if (block) await notifyBlock(block.hash, h, block.txIds.slice(1));
    }
    if (cursor === null) await o.redis.set(chain.keys.callbackHeight, String(tip));
  });

  const server = http.createServer(
    createHttpHandler({
      chain,
      callbacks,
      faults,
      clock,
      feeSatoshisPerKb,
      strictness,
      realities,
      ...(o.apiKey !== undefined ? { apiKey: o.apiKey } : {}),
      ...(o.logger ? { logger: o.logger } : {}),
    }),
  );
  server.keepAliveTimeout = 5000;
  const host = o.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  callbacks.start();

  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    mineBlock()
      .catch((e: unknown) => o.logger?.error({ err: e }, 'devnet block production failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, o.blockIntervalMs);
      });
  };
  if (o.blockIntervalMs > 0) timer = setTimeout(tick, o.blockIntervalMs);

  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost === '0.0.0.0' ? '127.0.0.1' : urlHost}:${port}`,
    mineBlock,
    reorgLastBlock,
    faults,
    strictness,
    realities,
    close: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await queue;
      await callbacks.close();
    },
  };
}
