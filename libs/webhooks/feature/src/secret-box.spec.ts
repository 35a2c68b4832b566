import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box';

describe('SecretBox (signing secrets sealed at rest)', () => {
  const box = new SecretBox(randomBytes(32).toString('hex'));

  it('round-trips a secret for its webhook only, with a fresh IV each time', () => {
    const sealed = box.seal('whsec_c2VjcmV0', 'hook-1');
    expect(sealed).not.toContain('c2VjcmV0');
    expect(box.seal('whsec_c2VjcmV0', 'hook-1')).not.toBe(sealed);
    expect(box.open(sealed, 'hook-1')).toBe('whsec_c2VjcmV0');
    expect(() => box.open(sealed, 'hook-2')).toThrow();
    expect(() => new SecretBox(randomBytes(32).toString('hex')).open(sealed, 'hook-1')).toThrow();
    const [v, iv, tag, ct] = sealed.split('.') as [string, string, string, string];
    const tampered = Buffer.from(ct, 'base64');
    tampered[0] = (tampered[0] as number) ^ 1;
    expect(() => box.open([v, iv, tag, tampered.toString('base64')].join('.'), 'hook-1')).toThrow();
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new SecretBox('abcd')).toThrow(/32 bytes/);
  });
});
