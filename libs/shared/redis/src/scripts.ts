import fs from 'node:fs';
import path from 'node:path';
import type { RedisClient } from './connection';

/**
 * Registers Lua scripts named `<command>-<numberOfKeys>.lua` from `dir` as ioredis commands
 * (EVALSHA with automatic reload), the way BullMQ loads `src/commands`. A script named
 * `<command>-n.lua` takes a variable number of keys: its caller passes the count first, as EVAL
 * does. Returns the names.
 * `options.prelude` is Lua source put in front of every script of `dir` (shared local
 * functions, e.g. the funding pool's commit contract from @proofline/chain-wallet); it goes after
 * a script's `#!lua` line, which must stay the first line (on a Redis Cluster it makes Redis
 * refuse any key the script did not declare in KEYS).
 */
export function loadLuaCommands(redis: RedisClient, dir: string, options: { prelude?: string } = {}): string[] {
  const prelude = options.prelude ? `${options.prelude}\n` : '';
  const names: string[] = [];
  for (const file of fs.readdirSync(dir)) {
    const m = /^(.+)-(\d+|n)\.lua$/.exec(file);
    if (!m) continue;
    const [, name, keys] = m as unknown as [string, string, string];
    const camel = name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (!(camel in redis)) {
      const source = fs.readFileSync(path.join(dir, file), 'utf8');
      const shebang = /^#!lua[^\n]*\n/.exec(source)?.[0] ?? '';
      redis.defineCommand(camel, {
        ...(keys === 'n' ? {} : { numberOfKeys: Number(keys) }),
        lua: shebang + prelude + source.slice(shebang.length),
      });
      shareWithOpenAutoPipelines(redis, camel);
    }
    names.push(camel);
  }
  return names;
}

interface AutoPipelineInternals {
  readonly _autoPipelines?: Map<string, Record<string, unknown> & { _shaToScript: Record<string, unknown> }>;
  readonly scriptsSet: Record<string, { sha: string }>;
}

/**
 * ioredis copies a client's custom commands into a pipeline when it creates the pipeline. With
 * auto-pipelining, a pipeline is opened by the first command of an event-loop tick; a command
 * defined later in that same tick (a lib constructed while other commands are in flight) and
 * called at once would then fail with "pipeline[functionName] is not a function". Give the
 * pipelines already open the new command, exactly as ioredis's Pipeline constructor does (a
 * cluster client keeps one auto-pipeline per node, the same way).
 */
function shareWithOpenAutoPipelines(redis: RedisClient, name: string): void {
  const internals = redis as unknown as AutoPipelineInternals & Record<string, unknown>;
  const script = internals.scriptsSet[name];
  if (!internals._autoPipelines || !script) return;
  for (const pipeline of internals._autoPipelines.values()) {
    if (typeof pipeline[name] === 'function') continue;
    pipeline._shaToScript[script.sha] = script;
    pipeline[name] = internals[name];
    pipeline[`${name}Buffer`] = internals[`${name}Buffer`];
  }
}

/** Commands whose first argument is not a key. */
const KEYLESS_COMMANDS = new Set(['PUBLISH', 'TIME', 'ECHO', 'PING']);

/**
 * The Redis Cluster rules a Lua script's source breaks, for a spec to assert none: its first line
 * is not `#!lua`, or a `redis.call`/`redis.pcall` names a key otherwise than as an entry of one of
 * `keyTables` (`KEYS`, or the table a prelude function receives it as). Redis 7 with `#!lua`
 * refuses a key of another slot than the declared ones, but not an undeclared key of the same
 * slot (every key of one unit shares its tag), so a one-node cluster does not catch a key built
 * inside the script; this reading of the source does. Only the command's first argument is read:
 * a script with a multi-key command must declare the others as KEYS too (none does today).
 */
export function clusterScriptViolations(source: string, keyTables: readonly string[] = ['KEYS', 'K']): string[] {
  const out: string[] = [];
  if (!source.startsWith('#!lua')) out.push('first line is not #!lua');
  const table = new RegExp(`^(${keyTables.join('|')})\\[[^\\]]+\\]$`);
  for (const m of source.matchAll(/redis\.p?call\(\s*'([A-Za-z]+)'\s*(?:,\s*([^,)]+))?/g)) {
    const command = (m[1] as string).toUpperCase();
    if (KEYLESS_COMMANDS.has(command)) continue;
    const key = (m[2] ?? '').trim();
    if (!table.test(key)) out.push(`${command} ${key || '(no key)'}`);
  }
  return out;
}
