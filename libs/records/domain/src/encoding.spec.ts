import { createHash } from 'node:crypto';
import { AppError } from '@proofline/shared-errors';
import { applyEncoding, encodedContentType, parseEncodeParam, parseLinks, parseTxId } from './encoding';
import { generateUpdateToken, hashUpdateToken, updateTokenHashOf } from './update-token';

const all = { available: ['SHA256', 'Base64'] as const, unencodedAllowed: true };
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest();
const record = Buffer.from('hello proofline', 'utf8');

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).httpStatus).toBe(400);
    return (e as AppError).errorCode;
  }
  throw new Error('did not throw');
}

describe('parseEncodeParam', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['none', []],
    ['SHA256', [{ encoder: 'SHA256' }]],
    ['sha256|base64', [{ encoder: 'SHA256' }, { encoder: 'Base64' }]],
    ['SHA256(pepper)|Base64', [{ encoder: 'SHA256', salt: 'pepper' }, { encoder: 'Base64' }]],
    // what `SHA256(a%2Bb/c:d-e)` decodes to
    ['SHA256(a+b/c:d-e)', [{ encoder: 'SHA256', salt: 'a+b/c:d-e' }]],
    [
      'Base64(x)|SHA256(y)',
      [
        { encoder: 'Base64', salt: 'x' },
        { encoder: 'SHA256', salt: 'y' },
      ],
    ],
  ])('parses %j', (raw, steps) => {
    expect(parseEncodeParam(raw, all)).toEqual(steps);
  });

  it.each([
    ['SHA256(', 'ENCODE_PARAM_INVALID'],
    ['SHA256)', 'ENCODE_PARAM_INVALID'],
    ['SHA256((a))', 'ENCODE_PARAM_INVALID'],
    ['SHA256()', 'ENCODE_PARAM_INVALID'],
    ['SHA256|', 'ENCODE_PARAM_INVALID'],
    ['|SHA256', 'ENCODE_PARAM_INVALID'],
    ['SHA256||Base64', 'ENCODE_PARAM_INVALID'],
    // an unescaped + arrives as a space
    ['SHA256(a b)', 'ENCODE_PARAM_INVALID'],
    ['SHA256(a_b)', 'ENCODE_PARAM_INVALID'],
    ['SHA256(a.b)', 'ENCODE_PARAM_INVALID'],
    ['SHA256(a)x', 'ENCODE_PARAM_INVALID'],
    ['none|SHA256', 'ENCODE_PARAM_INVALID'],
    ['none(x)', 'ENCODE_PARAM_INVALID'],
    [`SHA256(${'a'.repeat(257)})`, 'ENCODE_PARAM_INVALID'],
    [Array(9).fill('Base64').join('|'), 'ENCODE_PARAM_INVALID'],
    ['MD5', 'UNKNOWN_ENCODER'],
    ['SHA256|ROT13(x)', 'UNKNOWN_ENCODER'],
  ])('rejects %j with %s', (raw, code) => {
    expect(codeOf(() => parseEncodeParam(raw, all))).toBe(code);
  });

  it('rejects an encoder the deployment does not enable', () => {
    expect(codeOf(() => parseEncodeParam('Base64', { available: ['SHA256'], unencodedAllowed: true }))).toBe(
      'UNKNOWN_ENCODER',
    );
  });

  it('requires an encoder when unencoded records are disabled', () => {
    const opts = { available: ['SHA256', 'Base64'] as const, unencodedAllowed: false };
    expect(codeOf(() => parseEncodeParam(undefined, opts))).toBe('ENCODER_SHA256_MISSING');
    expect(codeOf(() => parseEncodeParam('none', opts))).toBe('ENCODER_SHA256_MISSING');
    expect(parseEncodeParam('SHA256', opts)).toEqual([{ encoder: 'SHA256' }]);
  });
});

describe('applyEncoding (vectors computed independently with node:crypto)', () => {
  it('unencoded: bytes unchanged, octet-stream, no entries', () => {
    const r = applyEncoding([], record);
    expect(Buffer.from(r.bytes).equals(record)).toBe(true);
    expect(r.contentType).toBe('application/octet-stream');
    expect(r.encoding).toEqual([]);
  });

  it('SHA256: binary digest reported as lowercase hex', () => {
    const digest = sha(record);
    const r = applyEncoding([{ encoder: 'SHA256' }], record);
    expect(Buffer.from(r.bytes).equals(digest)).toBe(true);
    expect(r.contentType).toBe('application/octet-stream; event-encoded=SHA256');
    expect(r.encoding).toEqual([
      { contentType: 'application/octet-stream; event-encoded=SHA256', output: digest.toString('hex') },
    ]);
    // the well-known vector for "abc"
    expect(applyEncoding([{ encoder: 'SHA256' }], Buffer.from('abc')).encoding[0]?.output).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('salted and chained: salt prepended before its step, left to right', () => {
    // SHA256(a+b)|Base64, the salt arriving as a%2Bb
    const steps = parseEncodeParam(decodeURIComponent('SHA256(a%2Bb)|Base64'), all);
    const digest = sha(Buffer.concat([Buffer.from('a+b'), record]));
    const b64 = digest.toString('base64');
    const r = applyEncoding(steps, record);
    expect(r.encoding).toEqual([
      { contentType: 'application/octet-stream; event-encoded=SHA256', output: digest.toString('hex') },
      { contentType: 'text/plain; event-encoded=SHA256|Base64', output: b64 },
    ]);
    expect(Buffer.from(r.bytes).toString('ascii')).toBe(b64);
    expect(r.contentType).toBe('text/plain; event-encoded=SHA256|Base64');
  });

  it('Base64 then salted SHA256 hashes the salt followed by the Base64 text', () => {
    const text = record.toString('base64');
    const digest = sha(Buffer.concat([Buffer.from('s:1/x-'), Buffer.from(text, 'ascii')]));
    const r = applyEncoding([{ encoder: 'Base64' }, { encoder: 'SHA256', salt: 's:1/x-' }], record);
    expect(r.encoding[0]).toEqual({ contentType: 'text/plain; event-encoded=Base64', output: text });
    expect(r.encoding[1]).toEqual({
      contentType: 'application/octet-stream; event-encoded=Base64|SHA256',
      output: digest.toString('hex'),
    });
    expect(Buffer.from(r.bytes).equals(digest)).toBe(true);
  });

  it('salted Base64 encodes salt + record', () => {
    const r = applyEncoding([{ encoder: 'Base64', salt: 'pep' }], Buffer.from([0, 255]));
    expect(r.encoding[0]?.output).toBe(Buffer.from([0x70, 0x65, 0x70, 0, 255]).toString('base64'));
  });
});

describe('parameters', () => {
  it('txIds: 64 hex, normalised to lowercase', () => {
    expect(parseTxId('AB'.repeat(32))).toBe('ab'.repeat(32));
    for (const bad of ['', 'ab', 'g'.repeat(64), 'a'.repeat(65), undefined, ['a'.repeat(64)]]) {
      expect(codeOf(() => parseTxId(bad))).toBe('TX_ID_PARAM_INVALID');
    }
  });

  it('links: non-zero integers within the limit', () => {
    expect(parseLinks('3', 10)).toBe(3);
    expect(parseLinks('-10', 10)).toBe(-10);
    for (const bad of ['0', '-0', '1.5', 'abc', '', '11', '-11', '1e2', undefined, '99999999999']) {
      expect(codeOf(() => parseLinks(bad, 10))).toBe('LINKS_PARAM_INVALID');
    }
  });

  it('update tokens: fresh, hashed, and shape-checked', () => {
    const a = generateUpdateToken();
    expect(a).toMatch(/^utk_[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(generateUpdateToken());
    expect(updateTokenHashOf(a)).toBe(hashUpdateToken(a));
    expect(hashUpdateToken(a)).toBe(createHash('sha256').update(a).digest('hex'));
    expect(codeOf(() => updateTokenHashOf('nope'))).toBe('UPDATE_TOKEN_PARAM_INVALID');
  });
});

describe('encodedContentType: the content type derived from the encoder names alone', () => {
  it.each([
    [[], 'application/octet-stream'],
    [['SHA256'], 'application/octet-stream; event-encoded=SHA256'],
    [['Base64'], 'text/plain; event-encoded=Base64'],
    [['Base64', 'SHA256'], 'application/octet-stream; event-encoded=Base64|SHA256'],
    [['SHA256', 'Base64', 'SHA256'], 'application/octet-stream; event-encoded=SHA256|Base64|SHA256'],
  ] as const)('%j → %s', (encoders, contentType) => {
    expect(encodedContentType(encoders)).toBe(contentType);
  });

  it('is what applyEncoding reports, salts or not', () => {
    const steps = parseEncodeParam('SHA256(salt1)|Base64|SHA256(s2)', {
      available: ['SHA256', 'Base64'],
      unencodedAllowed: true,
    });
    expect(applyEncoding(steps, new Uint8Array([1, 2, 3])).contentType).toBe(
      'application/octet-stream; event-encoded=SHA256|Base64|SHA256',
    );
  });
});
