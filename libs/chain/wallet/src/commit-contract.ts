import fs from 'node:fs';
import path from 'node:path';
import { WALLET_LUA_DIR } from './funding-pool';

let cached: string | undefined;

/**
 * The Lua source of the pool's commit contract: two local functions, `pool_check(K, k, A, a)`
 * and `pool_apply(K, k, A, a)`, cut from `wallet-commit-9.lua` (one source of truth). A records
 * accept script that starts with this source (`loadLuaCommands(redis, dir, { prelude:
 * poolCommitLua() })`) moves a record's funding in the same atomic call that stores it:
 *
 * ```lua
 * -- KEYS[4..12] = pool.commitKeys(txId), ARGV[5..11] = pool.commitArgs(...)
 * local refused = pool_check(KEYS, 4, ARGV, 5)   -- before any write: 'EXISTS' | 'LEASE_LOST' | 'TAKEN' | false
 * if refused then return refused end
 * ... store the record ...
 * pool_apply(KEYS, 4, ARGV, 5)
 * ```
 */
export function poolCommitLua(): string {
  if (cached === undefined) {
    const source = fs.readFileSync(path.join(WALLET_LUA_DIR, 'wallet-commit-9.lua'), 'utf8');
    const m = /-- BEGIN pool_commit\n([\s\S]*?)-- END pool_commit/.exec(source);
    if (!m) throw new Error('wallet-commit-9.lua lost its pool_commit markers');
    cached = m[1] as string;
  }
  return cached;
}
