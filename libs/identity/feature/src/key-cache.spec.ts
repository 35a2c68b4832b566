import type { ApiKeyRecord } from '@proofline/identity-domain';
import { KeyCache } from './authenticator';

const rec = (id: string) => ({ id }) as unknown as ApiKeyRecord;

describe('KeyCache', () => {
  it('is bypassed until trusted, and cleared whenever trust changes (subscriber reconnects)', () => {
    const c = new KeyCache(10, 30_000);
    c.set('h1', rec('a'), c.generation);
    expect(c.get('h1')).toBeUndefined();
    c.setTrusted(true);
    c.set('h1', rec('a'), c.generation);
    expect(c.get('h1')).toEqual(rec('a'));
    c.setTrusted(false);
    expect(c.get('h1')).toBeUndefined();
    c.setTrusted(true);
    expect(c.get('h1')).toBeUndefined();
  });

  it('invalidates by key id and refuses an insert that raced an invalidation', () => {
    const c = new KeyCache(10, 30_000);
    c.setTrusted(true);
    c.set('h1', rec('a'), c.generation);
    c.set('h2', rec('b'), c.generation);
    const before = c.generation;
    c.invalidate('a');
    expect(c.get('h1')).toBeUndefined();
    expect(c.get('h2')).toEqual(rec('b'));
    c.set('h1', rec('a'), before); // looked up before the invalidation: stale
    expect(c.get('h1')).toBeUndefined();
  });

  it('is bounded (oldest evicted) and entries expire after the TTL', () => {
    const c = new KeyCache(2, 0);
    c.setTrusted(true);
    c.set('h1', rec('a'), c.generation);
    c.set('h2', rec('b'), c.generation);
    c.set('h3', rec('c'), c.generation);
    expect(c.size).toBe(2);
    const ttl = new KeyCache(5, -1);
    ttl.setTrusted(true);
    ttl.set('h', rec('x'), ttl.generation);
    expect(ttl.get('h')).toBeUndefined();
  });
});
