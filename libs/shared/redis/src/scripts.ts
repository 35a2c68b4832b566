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
      if (keys === 'n') keepOutOfClusterAutoPipelines(redis, camel);
    }
    names.push(camel);
  }
  return names;
}

/**
 * A cluster client's auto-pipeline groups a command by the node of its first argument, taken for
 * its key. A `-n` script's first argument is its number of keys, so its calls would join the
 * pipeline of whichever node holds the slot of "3", beside commands of that node, and ioredis
 * refuses a pipeline whose keys span nodes ("All keys in the pipeline should belong to the same
 * slots allocation group"): such scripts are sent on their own. Commands with a fixed number of
 * keys start with a key and stay auto-pipelined.
 */
function keepOutOfClusterAutoPipelines(redis: RedisClient, command: string): void {
  if (!(redis as { isCluster?: boolean }).isCluster) return;
  const options = redis.options as { autoPipeliningIgnoredCommands?: string[] };
  const ignored = options.autoPipeliningIgnoredCommands ?? [];
  if (!ignored.includes(command)) options.autoPipeliningIgnoredCommands = [...ignored, command];
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
