import { UnknownScriptReply, fromScriptReply } from '@proofline/shared-redis';
import { ACCEPT_REPLIES, NAVIGATE_REPLIES, SETTLE_REPLIES } from './record-store';

describe('Lua reply tables', () => {
  it('map every listed reply to its typed outcome', () => {
    for (const [reply, outcome] of Object.entries(ACCEPT_REPLIES))
      expect(fromScriptReply('accept-root-15.lua', ACCEPT_REPLIES, reply)).toBe(outcome);
    expect(fromScriptReply('navigate-2.lua', NAVIGATE_REPLIES, 'WRONG_FAMILY')).toBe('WRONG_FAMILY');
    expect(fromScriptReply('settle-3.lua', SETTLE_REPLIES, 1)).toBe(true);
    expect(fromScriptReply('settle-3.lua', SETTLE_REPLIES, 0)).toBe(false);
  });

  it('an unknown reply is an error naming the script, never a default', () => {
    expect(() => fromScriptReply('accept-successor-17.lua', ACCEPT_REPLIES, 'MAYBE')).toThrow(UnknownScriptReply);
    expect(() => fromScriptReply('accept-successor-17.lua', ACCEPT_REPLIES, 'MAYBE')).toThrow(
      'accept-successor-17.lua answered an unknown reply: "MAYBE"',
    );
    expect(() => fromScriptReply('settle-3.lua', SETTLE_REPLIES, 2)).toThrow(
      expect.objectContaining({ script: 'settle-3.lua', reply: 2 }),
    );
    expect(() => fromScriptReply('navigate-2.lua', NAVIGATE_REPLIES, null)).toThrow(UnknownScriptReply);
    // inherited object keys are not replies
    expect(() => fromScriptReply('navigate-2.lua', NAVIGATE_REPLIES, 'toString')).toThrow(UnknownScriptReply);
  });
});
