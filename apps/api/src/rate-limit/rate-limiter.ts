import path from 'node:path';
import type { Admission, AdmissionResult } from '@proofline/identity-feature';
import type { Principal } from '@proofline/identity-domain';
import type { RatePolicy } from '@proofline/shared-config';
import { AppError, redisUnavailable } from '@proofline/shared-errors';
import { loadLuaCommands } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { rateLimitKeys } from './keys';

export interface RateLimits {
  readonly perKey: RatePolicy | undefined;
  readonly perTenant: RatePolicy | undefined;
}

type RateLimitScript = (
  keyBucket: string,
  tenantBucket: string,
  keyInterval: number,
  keyBurst: number,
  tenantInterval: number,
  tenantBurst: number,
) => Promise<number[]>;

/** Policy names in the RateLimit-Policy / RateLimit fields. */
const POLICY = { key: 'per-key', tenant: 'per-tenant' } as const;

/**
 * The per-key and per-tenant rate limits of the REST app (`RATE_LIMIT_PER_KEY`,
 * `RATE_LIMIT_PER_TENANT`), shared by every API process through Redis: one EVALSHA per
 * authenticated request (GCRA over both buckets in one script, Redis TIME as the clock).
 *
 * Headers follow draft-ietf-httpapi-ratelimit-headers-10 (Structured Fields lists): every
 * admitted or refused response carries `RateLimit-Policy: "per-key";q=<burst>;w=<seconds>` (the
 * bucket, as a quota per window: `burst` requests per `burst / rate` seconds) and
 * `RateLimit: "per-key";r=<remaining>;t=<seconds until the bucket is full>`, one member per
 * configured policy. A refusal is 429 RATE_LIMITED with `Retry-After` (whole seconds, rounded up).
 */
export class RateLimiter {
  private readonly script: RateLimitScript;
  private readonly keys: ReturnType<typeof rateLimitKeys>;
  private readonly policyHeader: string;

  constructor(
    redis: RedisClient,
    prefix: string,
    private readonly limits: RateLimits,
  ) {
    loadLuaCommands(redis, path.join(__dirname, 'lua'));
    const bound = (redis as unknown as { rateLimit: RateLimitScript }).rateLimit;
    this.script = bound.bind(redis);
    this.keys = rateLimitKeys(prefix);
    this.policyHeader = [policyMember(POLICY.key, limits.perKey), policyMember(POLICY.tenant, limits.perTenant)]
      .filter((m) => m !== undefined)
      .join(', ');
  }

  /** An Admission for the identity feature, or undefined when no limit is configured (no cost at all). */
  static admission(redis: RedisClient, prefix: string, limits: RateLimits): Admission | undefined {
    if (!limits.perKey && !limits.perTenant) return undefined;
    const limiter = new RateLimiter(redis, prefix, limits);
    return (principal) => limiter.admit(principal);
  }

  /** Admits (returns the RateLimit headers) or throws 429 RATE_LIMITED; a Redis fault is 503 REDIS_UNAVAILABLE. */
  async admit(principal: Pick<Principal, 'keyId' | 'tenant'>): Promise<AdmissionResult> {
    const { perKey, perTenant } = this.limits;
    let reply: number[];
    try {
      reply = await this.script(
        this.keys.key(principal.tenant, principal.keyId),
        this.keys.tenant(principal.tenant),
        interval(perKey),
        perKey?.burst ?? 0,
        interval(perTenant),
        perTenant?.burst ?? 0,
      );
    } catch (err) {
      throw redisUnavailable(err);
    }
    const [admitted, waitUs, keyRemaining, keyFullUs, tenantRemaining, tenantFullUs] = reply.map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const state = [
      stateMember(POLICY.key, perKey, keyRemaining, keyFullUs),
      stateMember(POLICY.tenant, perTenant, tenantRemaining, tenantFullUs),
    ].filter((m) => m !== undefined);
    const headers: Record<string, string> = { 'RateLimit-Policy': this.policyHeader, RateLimit: state.join(', ') };
    if (admitted === 1) return { headers };
    const retryAfter = Math.max(1, Math.ceil(waitUs / 1e6));
    throw new AppError({
      errorCode: 'RATE_LIMITED',
      httpStatus: 429,
      detail: `Too many requests for this API key or its tenant (${this.policyHeader}). Retry after ${retryAfter} s.`,
      headers: { ...headers, 'Retry-After': String(retryAfter) },
    });
  }
}

const interval = (p: RatePolicy | undefined): number => (p ? Math.max(1, Math.round(1e6 / p.perSecond)) : 0);

function policyMember(name: string, p: RatePolicy | undefined): string | undefined {
  if (!p) return undefined;
  return `"${name}";q=${p.burst};w=${Math.max(1, Math.ceil(p.burst / p.perSecond))}`;
}

function stateMember(name: string, p: RatePolicy | undefined, remaining: number, fullInUs: number): string | undefined {
  if (!p) return undefined;
  return `"${name}";r=${Math.max(0, remaining)};t=${Math.max(0, Math.ceil(fullInUs / 1e6))}`;
}
