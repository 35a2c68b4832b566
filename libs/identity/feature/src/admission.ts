import type { Principal } from '@proofline/identity-domain';

/** What an admission check adds to an admitted request's response (e.g. RateLimit headers). */
export interface AdmissionResult {
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Decides, after a key authenticated and before its permissions are judged, whether the caller
 * may proceed now: the per-key and per-tenant rate limits of the REST app. Refuses by throwing an
 * AppError (429 RATE_LIMITED with its headers). Absent = no check and no cost.
 */
export type Admission = (principal: Principal) => Promise<AdmissionResult>;
