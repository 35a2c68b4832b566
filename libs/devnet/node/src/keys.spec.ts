import { keyTag } from '@proofline/shared-redis';
import { competitorsKey, devnetKeys, legacyDevnetTipKey, orphansOfKey } from './keys';

/** The part of a key Redis Cluster hashes: the first `{…}` with something inside, else the whole key. */
const hashedPart = (key: string): string => /\{([^}]+)\}/.exec(key)?.[1] ?? key;

// Every script's #!lua line and KEYS-only keys are checked for the whole repository by tools/lint/lua-keys.spec.ts.
describe('devnet keys on a Redis Cluster', () => {
  const prefix = 'proofline';
  const k = devnetKeys(prefix);
  const every = [...Object.values(k), competitorsKey(k, 'ab'.repeat(32)), orphansOfKey(k, 'cd'.repeat(32))];

  it('puts every key under keyTag(prefix, "devnet"), so one script or MULTI may touch any of them', () => {
    for (const key of every) {
      expect(key.startsWith(`${keyTag(prefix, 'devnet')}:chain:`)).toBe(true);
      expect(hashedPart(key)).toBe('devnet');
    }
    // The names keep what followed the prefix before the tag: `<prefix>:devnet:chain:x` -> `<prefix>:{devnet}:chain:x`.
    expect(k.tip).toBe('proofline:{devnet}:chain:tip');
    expect(legacyDevnetTipKey(prefix).replace(`${prefix}:devnet:`, `${keyTag(prefix, 'devnet')}:`)).toBe(k.tip);
  });
});
