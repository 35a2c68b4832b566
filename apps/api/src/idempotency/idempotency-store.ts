import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import path from 'node:path';
import { loadLuaCommands } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';
import { idempotencyKeys } from './keys';

/** A response as the first request answered it, replayed byte for byte. */
export interface RecordedAnswer {
  readonly status: number;
  /** Response headers worth replaying (Content-Type, Retry-After, ETag, Location). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** What a claim attempt found. `fingerprint` is the request the key was first used with. */
export type ClaimOutcome =
  | { readonly kind: 'claimed'; readonly owner: string }
  | { readonly kind: 'pending'; readonly fingerprint: string }
  | { readonly kind: 'done'; readonly fingerprint: string; readonly answer: RecordedAnswer };

export interface IdempotencyOptions {
  /** How long a recorded answer is replayed (default 24 h). */
  readonly ttlMs?: number;
  /**
   * How long a claim outlives a request that never answered (a crashed process). Default 60 s,
   * the API server's `requestTimeout`: no request still runs after that, so a retry that claims
   * an expired claim cannot race the original.
   */
  readonly claimTtlMs?: number;
  /** How long a concurrent request with the same key waits for the first one's answer before 409 (default 5 s). */
  readonly waitMs?: number;
}

export const IDEMPOTENCY_DEFAULTS = { ttlMs: 24 * 3600_000, claimTtlMs: 60_000, waitMs: 5000 } as const;

interface PendingEntry {
  readonly v: 1;
  readonly state: 'pending';
  readonly fp: string;
  readonly owner: string;
}
interface DoneEntry {
  readonly v: 1;
  readonly state: 'done';
  readonly fp: string;
  /** AES-256-GCM of the answer's JSON, base64: iv (12) | tag (16) | ciphertext. */
  readonly answer: string;
}
type Entry = PendingEntry | DoneEntry;

type ReleaseClaim = (key: string, owner: string) => Promise<number>;

/**
 * Claims and records the answers of idempotent writes in Redis.
 *
 * Nothing secret is stored in the clear: the entry's name holds a SHA-256 of the Idempotency-Key,
 * and the recorded answer (which may carry a fresh `updateToken`) is encrypted with AES-256-GCM
 * under a key derived (HKDF-SHA256) from the Idempotency-Key and the tenant. Only a client that
 * sends the same Idempotency-Key can have it decrypted.
 */
export class IdempotencyStore {
  readonly ttlMs: number;
  readonly claimTtlMs: number;
  readonly waitMs: number;
  private readonly keys: ReturnType<typeof idempotencyKeys>;
  private readonly releaseClaim: ReleaseClaim;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    options: IdempotencyOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? IDEMPOTENCY_DEFAULTS.ttlMs;
    this.claimTtlMs = options.claimTtlMs ?? IDEMPOTENCY_DEFAULTS.claimTtlMs;
    this.waitMs = options.waitMs ?? IDEMPOTENCY_DEFAULTS.waitMs;
    this.keys = idempotencyKeys(prefix);
    loadLuaCommands(redis, path.join(__dirname, 'lua'));
    this.releaseClaim = (redis as unknown as { releaseClaim: ReleaseClaim }).releaseClaim.bind(redis);
  }

  /** The Redis key of `idempotencyKey` for `tenant` (tests inspect it). */
  entryKey(tenant: string, idempotencyKey: string): string {
    return this.keys.entry(
      tenant,
      createHash('sha256').update(`proofline-idempotency-lookup\0${idempotencyKey}`).digest('hex'),
    );
  }

  /**
   * One round trip (`SET … NX PX … GET`): claims the key for this request, or returns what an
   * earlier request left there (its claim or its recorded answer).
   */
  async claim(tenant: string, idempotencyKey: string, fingerprint: string): Promise<ClaimOutcome> {
    const owner = randomBytes(12).toString('base64url');
    const pending: PendingEntry = { v: 1, state: 'pending', fp: fingerprint, owner };
    const previous = (await this.redis.call(
      'SET',
      this.entryKey(tenant, idempotencyKey),
      JSON.stringify(pending),
      'PX',
      String(this.claimTtlMs),
      'NX',
      'GET',
    )) as string | null;
    if (previous === null) return { kind: 'claimed', owner };
    const entry = JSON.parse(previous) as Entry;
    if (entry.state === 'pending') return { kind: 'pending', fingerprint: entry.fp };
    return { kind: 'done', fingerprint: entry.fp, answer: decrypt(entry.answer, tenant, idempotencyKey) };
  }

  /**
   * Records the answer of a claimed request for `ttlMs`. The command is written to the Redis
   * connection at once (callers need not await it before answering: ioredis pipelines it ahead
   * of anything sent later).
   */
  complete(tenant: string, idempotencyKey: string, fingerprint: string, answer: RecordedAnswer): Promise<unknown> {
    const done: DoneEntry = { v: 1, state: 'done', fp: fingerprint, answer: encrypt(answer, tenant, idempotencyKey) };
    return this.redis.set(this.entryKey(tenant, idempotencyKey), JSON.stringify(done), 'PX', this.ttlMs);
  }

  /** Gives a claim up (the request failed with a server fault): a retry may do the work. */
  release(tenant: string, idempotencyKey: string, owner: string): Promise<number> {
    return this.releaseClaim(this.entryKey(tenant, idempotencyKey), owner);
  }
}

function answerKey(tenant: string, idempotencyKey: string): Buffer {
  return Buffer.from(hkdfSync('sha256', idempotencyKey, 'proofline-idempotency-answer-v1', tenant, 32));
}

function encrypt(answer: RecordedAnswer, tenant: string, idempotencyKey: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', answerKey(tenant, idempotencyKey), iv);
  const plain = Buffer.from(
    JSON.stringify({ status: answer.status, headers: answer.headers, body: answer.body.toString('base64') }),
  );
  const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

function decrypt(blob: string, tenant: string, idempotencyKey: string): RecordedAnswer {
  const raw = Buffer.from(blob, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', answerKey(tenant, idempotencyKey), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  const plain = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as {
    status: number;
    headers: Record<string, string>;
    body: string;
  };
  return { status: plain.status, headers: plain.headers, body: Buffer.from(plain.body, 'base64') };
}
