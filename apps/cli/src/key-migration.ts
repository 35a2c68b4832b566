import { Redis } from '@proofline/shared-redis';
import type { RedisClient } from '@proofline/shared-redis';

/**
 * Moves a deployment's keys from the layout before Redis Cluster support (`<prefix>:<name>…`, no
 * hash tags) to today's (`<prefix>:{<unit>}:<name>…`, see `keyTag` in shared-redis), in place, on
 * the standalone Redis that holds them. What comes after the tag is the old name unchanged, so a
 * move is a RENAME and the rule is which unit an old name belongs to.
 *
 * The service must be stopped while it runs (a writer of old names would race the moves); the
 * workers' heartbeats are checked for that. It is idempotent and resumable: names that already
 * start with a tag are left alone, and RENAMENX never overwrites a key of the new layout. A
 * deployment that grows onto a cluster runs this first and then imports the keys into the cluster
 * (`redis-cli --cluster import`, docs/redis-cluster.md).
 */

/**
 * The new name of an old key, both without `<prefix>:`: `{<unit>}:<…>`; `expire` for a key that is
 * not moved but left to expire (it carries a TTL and cannot be placed: a rate-limit bucket whose
 * name lacks its tenant); undefined for a name no rule knows.
 */
export type Rename = (rest: string) => string | 'expire' | undefined;

/**
 * The layout before hash tags → today's. Every unit keeps the old name after its tag, except
 * BullMQ's (`bull:<queue>:<key>` → `{bull:<queue>}:<queue>:<key>`, BullMQ's own form with the tag
 * as its prefix) and idempotency entries, tagged per tenant (`idempotency:<tenant>:…`).
 */
export const renameFromUntagged: Rename = (rest) => {
  const [first, second] = rest.split(':', 2);
  switch (first) {
    case 'records':
    case 'wallet':
      return `{rec}:${rest}`;
    case 'arc':
      return `{arc}:${rest}`;
    case 'identity':
      return `{idty}:${rest}`;
    case 'webhooks':
      return `{wh}:${rest}`;
    case 'workers':
    case 'auth':
      return `{proc}:${rest}`;
    case 'devnet':
      // The node's prefix was `<prefix>:devnet`; its keys are `<prefix>:{devnet}:chain:*` now.
      return second ? `{devnet}:${rest.slice('devnet:'.length)}` : undefined;
    case 'idempotency':
      return second ? `{idem:${second}}:${rest}` : undefined;
    case 'bull':
      return second ? `{bull:${second}}:${rest.slice('bull:'.length)}` : undefined;
    case 'ratelimit':
      return 'expire';
    default:
      return undefined;
  }
};

export interface KeyMigrationReport {
  /** Keys under the prefix that were looked at. */
  scanned: number;
  /** Keys renamed (or, in a dry run, that would be). */
  moved: number;
  /** Keys already in the new layout. */
  alreadyMoved: number;
  /** Per unit (the tag's content), keys moved. */
  byUnit: Record<string, number>;
  /** Keys left in place to expire (rate-limit buckets). */
  leftToExpire: number;
  /** Old names no rule knows (left in place; the first 20). */
  unknown: string[];
  /** Old names whose new name already exists (left in place; the first 20). */
  conflicts: string[];
}

export interface KeyMigrationOptions {
  dryRun?: boolean;
  /** Run even though a worker's heartbeat is fresh (the service looks alive). */
  force?: boolean;
  /** Keys renamed per pipeline. */
  batch?: number;
  /** Now, in ms (tests pin it). */
  now?: number;
}

/** Heartbeat younger than this means a worker is running (workers beat every few seconds). */
const LIVE_HEARTBEAT_MS = 60_000;

export async function migrateKeys(
  redis: RedisClient,
  prefix: string,
  rename: Rename,
  options: KeyMigrationOptions = {},
): Promise<KeyMigrationReport> {
  if (!(redis instanceof Redis))
    throw new Error(
      'key migration runs on the standalone Redis that holds the old layout; import the moved keys into the cluster afterwards (docs/redis-cluster.md)',
    );
  if (!options.force) await refuseWhileRunning(redis, prefix, rename, options.now ?? Date.now());
  const batch = options.batch ?? 500;
  const report: KeyMigrationReport = {
    scanned: 0,
    moved: 0,
    alreadyMoved: 0,
    byUnit: {},
    leftToExpire: 0,
    unknown: [],
    conflicts: [],
  };
  const head = `${prefix}:`;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${head}*`, 'COUNT', 1000);
    cursor = next;
    const moves: Array<[from: string, to: string, unit: string]> = [];
    for (const key of keys) {
      report.scanned += 1;
      const rest = key.slice(head.length);
      if (rest.startsWith('{')) {
        report.alreadyMoved += 1;
        continue;
      }
      const renamed = rename(rest);
      if (renamed === 'expire') {
        report.leftToExpire += 1;
        continue;
      }
      const unit = renamed && /^\{([^}]+)\}:/.exec(renamed)?.[1];
      if (!renamed || !unit) {
        if (report.unknown.length < 20) report.unknown.push(key);
        continue;
      }
      moves.push([key, head + renamed, unit.split(':')[0] ?? unit]);
    }
    for (let i = 0; i < moves.length; i += batch) {
      const slice = moves.slice(i, i + batch);
      const results = options.dryRun
        ? slice.map(() => [null, 1] as const)
        : ((await slice.reduce((p, [from, to]) => p.renamenx(from, to), redis.pipeline()).exec()) ?? []);
      results.forEach(([err, renamed], j) => {
        const [from, , unit] = slice[j] as [string, string, string];
        if (err) throw err;
        if (Number(renamed) === 1) {
          report.moved += 1;
          report.byUnit[unit] = (report.byUnit[unit] ?? 0) + 1;
        } else if (report.conflicts.length < 20) report.conflicts.push(from);
      });
    }
  } while (cursor !== '0');
  return report;
}

/** Throws when a worker's heartbeat (old or new layout) is fresh: the service is running. */
export async function refuseWhileRunning(
  redis: RedisClient,
  prefix: string,
  rename: Rename,
  now: number,
): Promise<void> {
  const rest = 'workers:heartbeats';
  const moved = rename(rest);
  const names = [`${prefix}:${rest}`, ...(moved && moved !== 'expire' ? [`${prefix}:${moved}`] : [])];
  for (const name of names) {
    if ((await redis.type(name)) !== 'zset') continue;
    const latest = await redis.zrevrange(name, 0, 0, 'WITHSCORES');
    const beat = Number(latest[1]);
    if (Number.isFinite(beat) && now - beat < LIVE_HEARTBEAT_MS)
      throw new Error(
        `a worker beat ${Math.round((now - beat) / 1000)} s ago (${name}): stop the service before moving its keys, or pass --force`,
      );
  }
}
