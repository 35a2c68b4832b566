import fs from 'node:fs';
import path from 'node:path';
import { poolCommitLua } from '@proofline/chain-wallet';
import { clusterScriptViolations } from '@proofline/shared-redis';

// A one-node cluster refuses a key of another slot, not an undeclared key under the records' own
// tag: this reads every script (with the pool's commit contract it embeds) for keys not in KEYS.
describe('records Lua scripts on a Redis Cluster', () => {
  const dir = path.join(__dirname, 'lua');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.lua'));

  it.each(files)('%s starts with #!lua and touches only KEYS', (file) => {
    const source = fs.readFileSync(path.join(dir, file), 'utf8');
    expect(clusterScriptViolations(source)).toEqual([]);
  });

  it('the pool commit contract the accept scripts embed touches only the KEYS it is given', () => {
    expect(clusterScriptViolations(`#!lua\n${poolCommitLua()}`)).toEqual([]);
  });
});
