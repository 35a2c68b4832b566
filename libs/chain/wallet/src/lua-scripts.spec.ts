import fs from 'node:fs';
import path from 'node:path';
import { clusterScriptViolations } from '@proofline/shared-redis';
import { WALLET_LUA_DIR } from './funding-pool';

// A one-node cluster refuses a key of another slot, not an undeclared key under the pool's own
// tag: this reads every script for keys not in KEYS.
describe('wallet Lua scripts on a Redis Cluster', () => {
  it.each(fs.readdirSync(WALLET_LUA_DIR).filter((f) => f.endsWith('.lua')))(
    '%s starts with #!lua and touches only KEYS',
    (file) => {
      expect(clusterScriptViolations(fs.readFileSync(path.join(WALLET_LUA_DIR, file), 'utf8'))).toEqual([]);
    },
  );
});
