import { UnknownScriptReply, fromScriptReply } from '@proofline/shared-redis';
import { COMMIT_BLOCK_REPLIES, NODE_ACCEPT_REPLIES, REORG_TIP_REPLIES } from './script-replies';

describe('devnet Lua reply tables', () => {
  it('map each reply of commit-block; anything else names the script', () => {
    expect(fromScriptReply('commit-block-9.lua', COMMIT_BLOCK_REPLIES, 'OK')).toBe('committed');
    expect(fromScriptReply('commit-block-9.lua', COMMIT_BLOCK_REPLIES, 'STALE_TIP')).toBe('stale');
    expect(fromScriptReply('commit-block-9.lua', COMMIT_BLOCK_REPLIES, 'NOT_IN_MEMPOOL')).toBe('stale');
    expect(() => fromScriptReply('commit-block-9.lua', COMMIT_BLOCK_REPLIES, 'ERR')).toThrow(
      expect.objectContaining({ name: 'UnknownScriptReply', script: 'commit-block-9.lua', reply: 'ERR' }),
    );
    expect(() => fromScriptReply('commit-block-9.lua', COMMIT_BLOCK_REPLIES, undefined)).toThrow(UnknownScriptReply);
  });

  it('map each reply of the node scripts (node-accept, reorg-tip); anything else names the script', () => {
    for (const r of ['accepted', 'known', 'DOUBLE_SPEND', 'SPENT_IN_BLOCK', 'MISSING_INPUT', 'IMMATURE']) {
      expect(fromScriptReply('node-accept-7.lua', NODE_ACCEPT_REPLIES, r)).toBe(r);
    }
    expect(fromScriptReply('reorg-tip-8.lua', REORG_TIP_REPLIES, 'OK')).toBe('committed');
    expect(fromScriptReply('reorg-tip-8.lua', REORG_TIP_REPLIES, 'STALE_TIP')).toBe('stale');
    expect(() => fromScriptReply('node-accept-7.lua', NODE_ACCEPT_REPLIES, 'NOPE')).toThrow(
      expect.objectContaining({ script: 'node-accept-7.lua' }),
    );
  });
});
