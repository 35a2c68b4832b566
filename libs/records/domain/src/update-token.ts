import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '@proofline/shared-errors';

const TOKEN = /^utk_[A-Za-z0-9_-]{43}$/;

/** A fresh update token (`utk_` + 32 random bytes, base64url). Only its hash is stored. */
export function generateUpdateToken(): string {
  return `utk_${randomBytes(32).toString('base64url')}`;
}

/** The stored form of an update token: SHA-256, lowercase hex. */
export function hashUpdateToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Validates the shape of a supplied token and returns its hash (what the store compares;
 * comparing hashes of a high-entropy secret leaks nothing useful through timing).
 * @throws AppError 400 `UPDATE_TOKEN_PARAM_INVALID` when it is not a token this service issues
 */
export function updateTokenHashOf(raw: string): string {
  if (!TOKEN.test(raw)) throw invalidUpdateToken();
  return hashUpdateToken(raw);
}

export function invalidUpdateToken(): AppError {
  return new AppError({
    errorCode: 'UPDATE_TOKEN_PARAM_INVALID',
    httpStatus: 400,
    detail: 'updateToken is not the token returned when this linked record was created or updated.',
  });
}
