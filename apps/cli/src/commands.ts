import fs from 'node:fs';
import { mintToken } from '@proofline/identity-claims';
import { ArcProofStore } from '@proofline/chain-arc';
import { createBootstrapKey, importLegacyKeys } from '@proofline/identity-feature';
import { RecordStore } from '@proofline/records-data-access';
import type { Clock } from '@proofline/shared-config';
import { Cluster } from '@proofline/shared-redis';
import { migrateKeys, refuseWhileRunning, renameFromUntagged } from './key-migration';
import { convertLegacyTxIndex, migrateToPartitions } from './partition-migration';
import { migrateToTxShards } from './shard-migration';
import type { CliContext } from './main';
import { walletImport, walletSplit, walletStatus } from './wallet-commands';

export interface Command {
  group: string;
  action: string;
  run(ctx: CliContext, clock: Clock): Promise<void>;
}

/** Parses `--ttl` seconds (1 s .. 30 days). */
function ttlSeconds(raw: string | undefined): number {
  if (raw === undefined) return 3600;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 30 * 86400)
    throw new Error('--ttl must be a whole number of seconds between 1 and 2592000');
  return n;
}

export const COMMANDS: Command[] = [
  {
    group: 'keys',
    action: 'bootstrap',
    async run(ctx, clock) {
      // Only the raw key goes to stdout, so `KEY=$(npm run -s cli -- keys bootstrap)` works.
      const raw = await createBootstrapKey(
        { redis: ctx.redis, config: ctx.config, clock },
        ctx.options['tenant'] ?? 'default',
      );
      process.stdout.write(`${raw}\n`);
      console.error(
        `proofline cli: created an Issuer_Admin + Verifier_Admin key for tenant "${ctx.options['tenant'] ?? 'default'}"; it is shown only now.`,
      );
    },
  },
  {
    group: 'legacy',
    action: 'import',
    async run(ctx, clock) {
      const file = ctx.args[0];
      if (!file) throw new Error('usage: legacy import FILE.json [--tenant T]');
      let items: unknown;
      try {
        items = JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch (e) {
        throw new Error(`cannot read ${file} as JSON: ${e instanceof Error ? e.message : String(e)}`);
      }
      const report = await importLegacyKeys({ redis: ctx.redis, config: ctx.config, clock }, items, {
        tenant: ctx.options['tenant'] ?? 'default',
      });
      process.stdout.write(`${JSON.stringify(report)}\n`);
    },
  },
  {
    group: 'token',
    action: 'mint',
    async run(ctx, clock) {
      const claims = (ctx.options['claims'] ?? '')
        .split(',')
        .map((c) => c.trim())
        .filter((c) => c.length > 0);
      const token = await mintToken(
        { config: ctx.config, redis: ctx.redis, clock },
        { claims, subject: ctx.options['sub'] ?? 'dev-user', ttlSeconds: ttlSeconds(ctx.options['ttl']) },
      );
      process.stdout.write(`${token}\n`);
    },
  },
  {
    group: 'chain',
    action: 'index-owners',
    async run(ctx) {
      // Proofs stored before the tenant block index existed: index them by their record's tenant (idempotent).
      const store = new ArcProofStore(ctx.redis, ctx.config.redisPrefix);
      const records = new RecordStore(ctx.redis, ctx.config.redisPrefix, { partitions: ctx.config.redisPartitions });
      store.setOwnerLookup((txIds) => records.tenantsOf(txIds));
      process.stdout.write(`${JSON.stringify(await store.indexOwners())}\n`);
    },
  },
  { group: 'wallet', action: 'status', run: (ctx) => walletStatus(ctx) },
  { group: 'wallet', action: 'split', run: (ctx) => walletSplit(ctx) },
  { group: 'wallet', action: 'import', run: (ctx) => walletImport(ctx) },
  {
    group: 'redis',
    action: 'migrate-keys',
    async run(ctx) {
      const dryRun = ctx.options['dry-run'] === 'true';
      const force = ctx.options['force'] === 'true';
      const prefix = ctx.config.redisPrefix;
      // The layout before hash tags exists only on a standalone Redis: renamed there first. Then
      // records and the pool move from {rec} into REDIS_PARTITIONS partitions (server or cluster).
      const report =
        ctx.redis instanceof Cluster
          ? null
          : await migrateKeys(ctx.redis, prefix, renameFromUntagged, { dryRun, force });
      if (ctx.redis instanceof Cluster && !force)
        await refuseWhileRunning(ctx.redis, prefix, renameFromUntagged, Date.now());
      const renamed = !report || (report.unknown.length === 0 && report.conflicts.length === 0);
      const partitioned = renamed
        ? await migrateToPartitions(ctx.redis, prefix, ctx.config.redisPartitions, { dryRun })
        : null;
      // The txId → partition index's entries from before sub-buckets into today's form.
      const txIndex = renamed ? await convertLegacyTxIndex(ctx.redis, prefix, { dryRun }) : null;
      // Then the per-transaction keys of ARC and the webhooks watch set into the txId shards.
      const txShards = renamed ? await migrateToTxShards(ctx.redis, prefix, { dryRun }) : null;
      process.stdout.write(`${JSON.stringify({ dryRun, ...report, partitioned, txIndex, txShards })}\n`);
      if (report && (report.unknown.length > 0 || report.conflicts.length > 0))
        throw new Error(
          `${report.unknown.length} unknown and ${report.conflicts.length} conflicting keys left in place (listed above); records not partitioned`,
        );
    },
  },
];
