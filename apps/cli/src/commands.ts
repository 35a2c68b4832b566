import { mintToken } from '@proofline/identity-claims';
import type { Clock } from '@proofline/shared-config';
import type { CliContext } from './main';

export interface Command {
  group: string;
  action: string;
  run(ctx: CliContext, clock: Clock): Promise<void>;
}

/** Parses `--ttl` seconds (1 s .. 30 days). */
function ttlSeconds(raw: string | undefined): number {
  if (raw === undefined) return 3600;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 30 * 86400) throw new Error('--ttl must be a whole number of seconds between 1 and 2592000');
  return n;
}

export const COMMANDS: Command[] = [
  {
    group: 'token',
    action: 'mint',
    async run(ctx, clock) {
      const claims = (ctx.options['claims'] ?? '').split(',').map((c) => c.trim()).filter((c) => c.length > 0);
      const token = await mintToken(
        { config: ctx.config, redis: ctx.redis, clock },
        { claims, subject: ctx.options['sub'] ?? 'dev-user', ttlSeconds: ttlSeconds(ctx.options['ttl']) },
      );
      process.stdout.write(`${token}\n`);
    },
  },
];
