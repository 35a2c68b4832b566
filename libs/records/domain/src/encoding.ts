import { hash } from 'node:crypto';
import { AppError } from '@proofline/shared-errors';
import { ENCODER_NAMES, type EncoderName } from '@proofline/shared-config';
import type { EncodingEntry } from './responses';

/** One step of an `encode` chain: an encoder and the salt prepended to its input. */
export interface EncodeStep {
  readonly encoder: EncoderName;
  readonly salt?: string;
}

export interface EncodedRecord {
  /** The bytes published on chain. */
  readonly bytes: Uint8Array;
  /** Content type of `bytes` (the last step's; `application/octet-stream` when unencoded). */
  readonly contentType: string;
  readonly encoding: EncodingEntry[];
}

export interface ParseEncodeOptions {
  /** Encoders this deployment offers (`ENCODERS`). */
  readonly available: readonly EncoderName[];
  /** Whether a record may be published without any encoder (feature `unencoded`). */
  readonly unencodedAllowed: boolean;
}

/** Content type of an unencoded record. */
export const UNENCODED_CONTENT_TYPE = 'application/octet-stream';
/** Longest accepted chain (Base64 grows its input by 4/3 per step). */
export const MAX_ENCODE_STEPS = 8;
/** Longest accepted salt, in characters. */
export const MAX_SALT_LENGTH = 256;

const SALT = /^[A-Za-z0-9/:+-]+$/;
const STEP = /^([A-Za-z0-9]+)(?:\(([^()]*)\))?$/;

const invalid = (detail: string) => new AppError({ errorCode: 'ENCODE_PARAM_INVALID', httpStatus: 400, detail });

/**
 * Parses the `encode` parameter (spec §2.1): encoders joined by `|`, each optionally carrying a
 * salt in round brackets, e.g. `SHA256(pepper)|Base64`. Encoder names match case-insensitively.
 * Absent, empty or `none` means "publish unencoded".
 *
 * `raw` is the DECODED value. In a URL query a literal `+` means a space (form encoding), so a
 * `+` in a salt must be sent as `%2B`; a space is never a salt character, so an unescaped `+`
 * yields 400 ENCODE_PARAM_INVALID with a hint rather than a silently different salt.
 *
 * @throws AppError 400 `ENCODE_PARAM_INVALID` (syntax), `UNKNOWN_ENCODER` (unknown, or not in
 *   `available`), `ENCODER_SHA256_MISSING` (no encoder while unencoded records are disabled).
 * @example parseEncodeParam('SHA256(a%2Bb)' decoded as 'SHA256(a+b)', …) -> [{encoder:'SHA256', salt:'a+b'}]
 */
export function parseEncodeParam(raw: string | undefined, opts: ParseEncodeOptions): EncodeStep[] {
  const value = raw ?? '';
  if (value === '' || value.toLowerCase() === 'none') {
    if (!opts.unencodedAllowed) {
      throw new AppError({
        errorCode: 'ENCODER_SHA256_MISSING',
        httpStatus: 400,
        detail: 'This deployment does not publish unencoded records: name an encoder in `encode`, e.g. encode=SHA256.',
      });
    }
    return [];
  }
  const segments = value.split('|');
  if (segments.length > MAX_ENCODE_STEPS) throw invalid(`encode: at most ${MAX_ENCODE_STEPS} encoders may be chained.`);
  const steps: EncodeStep[] = [];
  for (const segment of segments) {
    if (segment.trim() === '') throw invalid('encode: empty encoder between `|` separators.');
    const m = STEP.exec(segment);
    if (!m) {
      if (segment.includes(' ')) {
        throw invalid(
          'encode: a salt may contain only A-Z a-z 0-9 / : - + (send `+` as %2B; an unescaped + in a URL means a space).',
        );
      }
      throw invalid(`encode: "${clip(segment)}" is not ENCODER or ENCODER(salt) with balanced round brackets.`);
    }
    const name = m[1] ?? '';
    const salt = m[2];
    if (name.toLowerCase() === 'none')
      throw invalid('encode: `none` cannot be combined with encoders or carry a salt.');
    const encoder = ENCODER_NAMES.find((k) => k.toLowerCase() === name.toLowerCase());
    if (!encoder) {
      throw new AppError({
        errorCode: 'UNKNOWN_ENCODER',
        httpStatus: 400,
        detail: `encode: unknown encoder "${clip(name)}" (known: ${ENCODER_NAMES.join(', ')}).`,
      });
    }
    if (!opts.available.includes(encoder)) {
      throw new AppError({
        errorCode: 'UNKNOWN_ENCODER',
        httpStatus: 400,
        detail: `encode: encoder ${encoder} is not enabled on this deployment (enabled: ${opts.available.join(', ') || 'none'}).`,
      });
    }
    if (salt !== undefined) {
      if (salt === '') throw invalid(`encode: empty salt in "${clip(segment)}".`);
      if (salt.length > MAX_SALT_LENGTH) throw invalid(`encode: a salt may be at most ${MAX_SALT_LENGTH} characters.`);
      if (!SALT.test(salt)) {
        throw invalid(
          'encode: a salt may contain only A-Z a-z 0-9 / : - + (send `+` as %2B; an unescaped + in a URL means a space).',
        );
      }
      steps.push({ encoder, salt });
    } else {
      steps.push({ encoder });
    }
  }
  return steps;
}

/**
 * The content type a record encoded with `encoders` has (what {@link applyEncoding} reports):
 * the last encoder decides binary or text, and every encoder applied is named. Salts do not
 * change it, so stores can derive it from the encoder names instead of keeping it per record.
 */
export function encodedContentType(encoders: readonly EncoderName[]): string {
  const last = encoders[encoders.length - 1];
  if (last === undefined) return UNENCODED_CONTENT_TYPE;
  return `${last === 'SHA256' ? 'application/octet-stream' : 'text/plain'}; event-encoded=${encoders.join('|')}`;
}

/**
 * Applies an encode chain left to right. Before each step that carries a salt, the salt's
 * ASCII bytes are prepended to that step's input. SHA256 yields binary (reported as lowercase
 * hex), Base64 yields text (standard alphabet, padded; its input next is the text's bytes).
 */
export function applyEncoding(steps: readonly EncodeStep[], input: Uint8Array): EncodedRecord {
  let bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  let contentType = UNENCODED_CONTENT_TYPE;
  const encoding: EncodingEntry[] = [];
  const applied: EncoderName[] = [];
  for (const step of steps) {
    const data = step.salt !== undefined ? Buffer.concat([Buffer.from(step.salt, 'ascii'), bytes]) : bytes;
    applied.push(step.encoder);
    if (step.encoder === 'SHA256') {
      bytes = hash('sha256', data, 'buffer');
      contentType = encodedContentType(applied);
      encoding.push({ contentType, output: bytes.toString('hex') });
    } else {
      const text = data.toString('base64');
      bytes = Buffer.from(text, 'ascii');
      contentType = encodedContentType(applied);
      encoding.push({ contentType, output: text });
    }
  }
  return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), contentType, encoding };
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

// The record routes' other parameters (`encode` is parsed above), validated where the domain
// defines them.

const TX_ID = /^[0-9a-fA-F]{64}$/;
const INTEGER = /^-?[0-9]{1,9}$/;

/**
 * Validates a txId (64 hex characters) and returns it lowercased.
 * @throws AppError 400 `TX_ID_PARAM_INVALID` (or `errorCode` when given)
 */
export function parseTxId(raw: unknown, name = 'txId'): string {
  if (typeof raw !== 'string' || !TX_ID.test(raw)) {
    throw new AppError({
      errorCode: 'TX_ID_PARAM_INVALID',
      httpStatus: 400,
      detail: `${name} must be 64 hexadecimal characters.`,
    });
  }
  return raw.toLowerCase();
}

/**
 * Parses navigate's `links`: a non-zero integer whose absolute value is at most `maxLinks`.
 * Positive means later records, negative earlier ones.
 * @throws AppError 400 `LINKS_PARAM_INVALID`
 */
export function parseLinks(raw: unknown, maxLinks: number): number {
  const bad = () =>
    new AppError({
      errorCode: 'LINKS_PARAM_INVALID',
      httpStatus: 400,
      detail: `links must be a non-zero integer between -${maxLinks} and ${maxLinks}.`,
    });
  if (typeof raw !== 'string' || !INTEGER.test(raw.trim())) throw bad();
  const n = Number(raw.trim());
  if (n === 0 || Math.abs(n) > maxLinks) throw bad();
  return n;
}
