import type { ChainHeader, HeadersSource } from '@proofline/chain-domain';
import { cachingHeaders } from './headers-client';

/** A headers source whose answers the test sets, counting what it is asked. */
function source() {
  const headers = new Map<string, ChainHeader>();
  const asked: string[] = [];
  const s: HeadersSource = {
    tip: async () => ({ height: 1, hash: 'a'.repeat(64) }),
    headerByHash: async (hash) => {
      asked.push(hash);
      if (hash === 'down') throw new Error('headers source down');
      return headers.get(hash) ?? null;
    },
  };
  return { s, headers, asked };
}

const header = (hash: string, confirmations: number): ChainHeader => ({
  hash,
  height: 7,
  confirmations,
  headerHex: '00'.repeat(80),
});

describe('cachingHeaders', () => {
  it('answers a main-chain header from memory within the window, asks again after it', async () => {
    const { s, headers, asked } = source();
    let t = 1000;
    const cached = cachingHeaders(s, 2000, () => t);
    headers.set('b1', header('b1', 1));
    for (let i = 0; i < 5; i++) expect(await cached.headerByHash('b1')).toEqual(header('b1', 1));
    expect(asked).toEqual(['b1']);
    t += 2001;
    headers.set('b1', header('b1', -1)); // left the main chain meanwhile
    expect((await cached.headerByHash('b1'))?.confirmations).toBe(-1);
    expect(await cached.headerByHash('b1')).toMatchObject({ confirmations: -1 });
    expect(asked).toEqual(['b1', 'b1', 'b1']); // an orphaned header is never cached
  });

  it('never caches an unknown block or a fault', async () => {
    const { s, headers, asked } = source();
    const cached = cachingHeaders(s, 60_000);
    expect(await cached.headerByHash('later')).toBeNull();
    headers.set('later', header('later', 1));
    expect(await cached.headerByHash('later')).toEqual(header('later', 1));
    await expect(cached.headerByHash('down')).rejects.toThrow('headers source down');
    await expect(cached.headerByHash('down')).rejects.toThrow('headers source down');
    expect(asked).toEqual(['later', 'later', 'down', 'down']);
  });
});
