import { AppError } from '@proofline/shared-errors';

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
