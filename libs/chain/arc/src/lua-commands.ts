import fs from 'node:fs';
import path from 'node:path';
import type { RedisClient } from '@proofline/shared-redis';
import { loadLuaCommands } from '@proofline/shared-redis';

type Arg = string | Buffer;

/** The proof store's Lua commands (see `lua/*.lua` for KEYS/ARGV), Buffer replies. */
export interface ArcCommands {
  arcBlockTxidsBuffer(...keysAndArgs: Arg[]): Promise<Buffer[]>;
  arcDropBlockBuffer(...keysAndArgs: Arg[]): Promise<Buffer[]>;
  /** Variable key count: `numberOfKeys, ...keys, ...args`, as EVAL. */
  arcStoreProofs(numberOfKeys: number, ...keysAndArgs: Arg[]): Promise<number>;
  arcIndexOwner(...keysAndArgs: Arg[]): Promise<number>;
  arcOwnerBlocksBuffer(...keysAndArgs: Arg[]): Promise<(Buffer | number)[]>;
  arcOwnerTxidsBuffer(...keysAndArgs: Arg[]): Promise<(Buffer | number)[]>;
  arcRaiseTip(...keysAndArgs: Arg[]): Promise<number>;
}

const LUA_DIR = path.join(__dirname, 'lua');
let prelude: string | undefined;

/**
 * Defines the commands on `redis` (idempotent; names are prefixed `arc` so they cannot clash).
 * `lua/block-members.lua` (no key count in its name, so no command) goes in front of each.
 */
export function arcCommands(redis: RedisClient): ArcCommands {
  prelude ??= fs.readFileSync(path.join(LUA_DIR, 'block-members.lua'), 'utf8');
  loadLuaCommands(redis, LUA_DIR, { prelude });
  return redis as unknown as ArcCommands;
}
