import path from 'node:path';
import type { RedisClient } from '@proofline/shared-redis';
import { loadLuaCommands } from '@proofline/shared-redis';

/** The devnet's Lua commands as ioredis defines them (see `lua/*.lua` for KEYS/ARGV). */
export interface DevnetCommands {
  commitBlock(...keysAndArgs: string[]): Promise<string[]>;
  nodeAccept(...keysAndArgs: string[]): Promise<string[]>;
  reorgTip(...keysAndArgs: string[]): Promise<string[]>;
  callbackClaim(...keysAndArgs: string[]): Promise<string[]>;
}

/** Defines the devnet's Lua commands on `redis` (idempotent) and returns them typed. */
export function devnetCommands(redis: RedisClient): DevnetCommands {
  loadLuaCommands(redis, path.join(__dirname, 'lua'));
  return redis as unknown as DevnetCommands;
}
