import { AppError } from '@proofline/shared-errors';

/** Why a call to ARC failed in a way that a later retry may fix. */
export type ArcTransientReason =
  | 'network'
  | 'timeout'
  | 'server-error'
  | 'rate-limited'
  | 'conflict'
  | 'malformed-response'
  | 'unknown-status'
  | 'not-found-without-problem'
  | 'unexpected-status'
  | 'batch-refused'
  | 'missing-in-batch';

/**
 * ARC could not be reached or answered something that a retry may fix (network error, timeout,
 * 5xx, 429, 409, a malformed or unrecognised body, a 404 without ARC's problem JSON). Always
 * `retryable`: a worker rethrows it so BullMQ backs off and re-sends the same bytes.
 */
export class ArcTransientError extends AppError {
  constructor(
    readonly reason: ArcTransientReason,
    detail: string,
    /** HTTP status ARC answered, when it answered. */
    readonly upstreamStatus?: number,
    cause?: unknown,
    /** Seconds from a Retry-After header, when ARC sent one. */
    readonly retryAfterSeconds?: number,
  ) {
    super({
      errorCode: 'ARC_UNAVAILABLE',
      httpStatus: 503,
      detail: `ARC: ${detail}`,
      retryable: true,
      cause,
      headers: { 'Retry-After': String(retryAfterSeconds ?? 5) },
    });
  }
}

/** ARC refused our credentials (401/403): not retryable until the operator fixes `ARC_API_KEY`. */
export class ArcAuthError extends AppError {
  constructor(
    readonly upstreamStatus: number,
    detail: string,
  ) {
    super({
      errorCode: 'ARC_AUTH_FAILED',
      httpStatus: 502,
      detail: `ARC refused the credentials (HTTP ${upstreamStatus}): ${detail}`,
      retryable: false,
    });
  }
}
