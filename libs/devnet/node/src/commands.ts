import fs from 'node:fs';
import path from 'node:path';
import type { RedisClient } from '@proofline/shared-redis';
import { loadLuaCommands } from '@proofline/shared-redis';
import type { DevnetKeys } from './keys';

/** The devnet's Lua commands as ioredis defines them (see `lua/*.lua` for KEYS/ARGV). */
export interface DevnetCommands {
  commitBlock(...keysAndArgs: string[]): Promise<string[]>;
  nodeAccept(...keysAndArgs: string[]): Promise<string[]>;
  reorgTip(...keysAndArgs: string[]): Promise<string[]>;
  callbackClaim(...keysAndArgs: string[]): Promise<string[]>;
}

/**
 * Defines the devnet's Lua commands on `redis` (idempotent) and returns them typed.
 * `lua/block-store.lua` (no key count in its name, so no command) goes in front of each.
 */
export function devnetCommands(redis: RedisClient): DevnetCommands {
  const dir = path.join(__dirname, 'lua');
  loadLuaCommands(redis, dir, { prelude: fs.readFileSync(path.join(dir, 'block-store.lua'), 'utf8') });
  return redis as unknown as DevnetCommands;
}

/**
 * The keys of a block's contents, in the order both block-writing scripts take them after their
 * own (`commit-block-9.lua` after tip and mempool, `reorg-tip-8.lua` after tip).
 */
export const blockContentKeys = (k: DevnetKeys): string[] => [
  k.raw,
  k.outputs,
  k.headers,
  k.heights,
  k.hashes,
  k.blockTxIds,
  k.mined,
];

/**
 * The last arguments of both block-writing scripts: the block's txIds (coinbase first) comma
 * separated, their count n, then per transaction its txId and its `mined` value
 * "blockHash|height|index|nodes" (`branches[i]`: the Merkle branch of `txIds[i]`).
 */
export function blockTxArgs(
  hash: string,
  height: number,
  txIds: readonly string[],
  branches: readonly (readonly string[])[],
): string[] {
  const perTx = txIds.flatMap((txId, index) => [
    txId,
    `${hash}|${height}|${index}|${(branches[index] ?? []).join(',')}`,
  ]);
  return [txIds.join(','), String(txIds.length), ...perTx];
}
