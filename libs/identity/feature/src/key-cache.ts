import type { ApiKeyRecord } from '@proofline/identity-domain';

/**
 * In-process cache of verified keys, by key hash: bounded, short TTL, invalidated by key id
 * through Redis pub/sub. It is only trusted while the invalidation subscriber is connected and
 * subscribed; every invalidation bumps a generation so a lookup that raced an invalidation can
 * not re-insert a stale entry.
 */
export class KeyCache {
  private readonly entries = new Map<string, { record: ApiKeyRecord; at: number }>();
  private generationValue = 0;
  private trusted = false;

  constructor(
    private readonly maxEntries = 10_000,
    private readonly ttlMs = 30_000,
  ) {}

  get generation(): number {
    return this.generationValue;
  }

  get size(): number {
    return this.entries.size;
  }

  get(keyHash: string): ApiKeyRecord | undefined {
    if (!this.trusted) return undefined;
    const hit = this.entries.get(keyHash);
    if (!hit) return undefined;
    if (Date.now() - hit.at > this.ttlMs) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return hit.record;
  }

  /** Inserts only when no invalidation happened since `generation` was read. */
  set(keyHash: string, record: ApiKeyRecord, generation: number): void {
    if (!this.trusted || generation !== this.generationValue) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(keyHash, { record, at: Date.now() });
  }

  invalidate(keyId: string): void {
    this.generationValue += 1;
    for (const [hash, { record }] of this.entries) if (record.id === keyId) this.entries.delete(hash);
  }

  clear(): void {
    this.generationValue += 1;
    this.entries.clear();
  }

  /** Called when the subscriber (re)subscribes (true) or loses its connection (false). */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.clear();
  }
}
