import path from 'node:path';
import type { Redis } from 'ioredis';
import { loadLuaCommands } from '@proofline/shared-redis';

type Arg = string | Buffer;

/** The proof store's Lua commands (see `lua/*.lua` for KEYS/ARGV), Buffer replies. */
export interface ArcCommands {
  arcInclusionsBuffer(...keysAndArgs: Arg[]): Promise<Buffer[]>;
  arcBlockTxidsBuffer(...keysAndArgs: Arg[]): Promise<Buffer[]>;
  arcDropBlockBuffer(...keysAndArgs: Arg[]): Promise<Buffer[]>;
  arcStoreProofs(...keysAndArgs: Arg[]): Promise<number>;
}

/** Defines the commands on `redis` (idempotent; names are prefixed `arc` so they cannot clash). */
export function arcCommands(redis: Redis): ArcCommands {
  loadLuaCommands(redis, path.join(__dirname, 'lua'));
  return redis as unknown as ArcCommands;
}
