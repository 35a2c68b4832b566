import { randomBytes } from 'node:crypto';
import { SignJWT, createRemoteJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import type { Clock, Config } from '@proofline/shared-config';
import { AppError } from '@proofline/shared-errors';
import type { RedisClient } from '@proofline/shared-redis';
import { sharedKeys } from '@proofline/shared-redis';

/** Granted claims result (spec §2.9). */
export interface GrantedClaims {
  grantedClaims: string[];
}

const INVALID = () =>
  new AppError({
    errorCode: 'INVALID_AUTHENTICATION_CREDENTIALS',
    httpStatus: 401,
    detail: 'invalid authentication credentials',
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  });

/**
 * Where the signing material comes from, in order: a JWKS URL (RS/ES tokens from an identity
 * provider), AUTH_JWT_SECRET (HS256), or — for a zero-configuration development start — a random
 * HS256 secret generated once and kept in Redis, which `npm run cli -- token mint` also reads.
 */
export type SigningKeySource =
  { kind: 'jwks'; url: string } | { kind: 'secret'; secret: Uint8Array } | { kind: 'dev-secret' };

export function signingKeySourceFrom(config: Config): SigningKeySource {
  if (config.auth.jwksUrl) return { kind: 'jwks', url: config.auth.jwksUrl };
  if (config.auth.jwtSecret) return { kind: 'secret', secret: new TextEncoder().encode(config.auth.jwtSecret) };
  return { kind: 'dev-secret' };
}

/** Returns the development secret, creating it atomically (SET NX) on first use. */
export async function devSecret(redis: RedisClient, prefix: string): Promise<Uint8Array> {
  const key = sharedKeys(prefix).devJwtSecret;
  await redis.set(key, randomBytes(48).toString('base64url'), 'NX');
  const value = await redis.get(key);
  if (!value) throw new Error('development JWT secret could not be read back');
  return new TextEncoder().encode(value);
}

export interface ClaimsServiceDeps {
  config: Config;
  redis: RedisClient;
  clock: Clock;
}

/** Verifies bearer JWTs with jose and returns the claims granted to their subject. */
export class ClaimsService {
  private readonly source: SigningKeySource;
  private jwks: JWTVerifyGetKey | undefined;
  private secret: Promise<Uint8Array> | undefined;

  constructor(private readonly deps: ClaimsServiceDeps) {
    this.source = signingKeySourceFrom(deps.config);
  }

  /**
   * No Authorization header: no credentials, so no claims (`[]`), as the spec's security
   * declaration allows. Anything else that is not a valid bearer JWT: 401.
   */
  async grantedClaims(authorization: string | undefined): Promise<GrantedClaims> {
    if (authorization === undefined || authorization.trim() === '') return { grantedClaims: [] };
    const m = /^Bearer\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)\s*$/i.exec(authorization);
    if (!m?.[1]) throw INVALID();
    const payload = await this.verify(m[1]);
    return { grantedClaims: readClaims(payload, this.deps.config.auth.claimsField) };
  }

  private async verify(token: string): Promise<JWTPayload> {
    const { issuer, audience } = this.deps.config.auth;
    const options = {
      ...(issuer ? { issuer } : {}),
      ...(audience ? { audience } : {}),
      currentDate: this.deps.clock.now(),
      clockTolerance: 5,
    };
    try {
      if (this.source.kind === 'jwks') {
        this.jwks ??= createRemoteJWKSet(new URL(this.source.url));
        const { payload } = await jwtVerify(token, this.jwks, {
          ...options,
          algorithms: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256', 'EdDSA'],
        });
        return payload;
      }
      const { payload } = await jwtVerify(token, await this.hmacSecret(), { ...options, algorithms: ['HS256'] });
      return payload;
    } catch (e) {
      if (e instanceof joseErrors.JOSEError || e instanceof TypeError || e instanceof SyntaxError) {
        throw new AppError({
          errorCode: 'INVALID_AUTHENTICATION_CREDENTIALS',
          httpStatus: 401,
          detail: 'invalid authentication credentials',
          internalDetail: (e as Error).message,
          headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
        });
      }
      throw e;
    }
  }

  private hmacSecret(): Promise<Uint8Array> {
    if (this.source.kind === 'secret') return Promise.resolve(this.source.secret);
    this.secret ??= devSecret(this.deps.redis, this.deps.config.redisPrefix).catch((e: unknown) => {
      this.secret = undefined;
      throw e;
    });
    return this.secret;
  }
}

/** Reads the configured claims field: an array of strings, or a space/comma separated string. */
export function readClaims(payload: JWTPayload, field: string): string[] {
  const value = payload[field];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  if (typeof value === 'string') return value.split(/[\s,]+/).filter((v) => v.length > 0);
  return [];
}

export interface MintOptions {
  claims: string[];
  subject?: string;
  /** Lifetime in seconds. */
  ttlSeconds?: number;
}

/** Mints an HS256 development token (AUTH_JWT_SECRET or the generated dev secret). */
export async function mintToken(deps: ClaimsServiceDeps, options: MintOptions): Promise<string> {
  const source = signingKeySourceFrom(deps.config);
  if (source.kind === 'jwks') {
    throw new Error('AUTH_JWKS_URL is set: tokens come from your identity provider, not from this CLI.');
  }
  const secret = source.kind === 'secret' ? source.secret : await devSecret(deps.redis, deps.config.redisPrefix);
  const now = Math.floor(deps.clock.now().getTime() / 1000);
  const { issuer, audience, claimsField } = deps.config.auth;
  let jwt = new SignJWT({ [claimsField]: options.claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(options.subject ?? 'dev-user')
    .setIssuedAt(now)
    .setExpirationTime(now + (options.ttlSeconds ?? 3600));
  if (issuer) jwt = jwt.setIssuer(issuer);
  if (audience) jwt = jwt.setAudience(audience);
  return jwt.sign(secret);
}
