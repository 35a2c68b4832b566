import fs from 'node:fs';
import path from 'node:path';
import { isClusterClient } from './connection';
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

/**
 * A cluster client's auto-pipelining groups each command by the slot of its first key, which it
 * takes to be the first argument for a command it does not know: for a `-n` script that is the
 * key count. Grouped by the slot of "3", the call lands in a pipeline with commands for another
 * master, and ioredis then fails every command of that pipeline. Such scripts are sent on their
 * own on a cluster client (ioredis routes a lone EVALSHA by its real keys); a server client keeps
 * pipelining them.
 */
function keepOutOfClusterAutoPipelines(redis: RedisClient, name: string): void {
  if (!isClusterClient(redis)) return;
  const client = redis as unknown as { options: { autoPipeliningIgnoredCommands?: string[] } };
  const ignored = client.options.autoPipeliningIgnoredCommands ?? [];
  // A new array: ioredis may share its default one between clients.
  if (!ignored.includes(name)) client.options.autoPipeliningIgnoredCommands = [...ignored, name];
}

/**
 * Lua script replies, one table per script family: every reply a script may give, mapped to its
 * typed outcome. A reply missing from the table is a script/code mismatch and throws
 * {@link UnknownScriptReply} naming the script (never a silent default).
 */
export type ReplyTable<T> = Readonly<Record<string, T>>;

/** A script answered something its reply table does not list. */
export class UnknownScriptReply extends Error {
  constructor(
    readonly script: string,
    readonly reply: unknown,
  ) {
    super(`${script} answered an unknown reply: ${JSON.stringify(reply)}`);
    this.name = 'UnknownScriptReply';
  }
}

/** Maps `reply` through `table`; throws {@link UnknownScriptReply} naming `script` when it is not listed. */
export function fromScriptReply<T>(script: string, table: ReplyTable<T>, reply: unknown): T {
  const key = typeof reply === 'string' || typeof reply === 'number' ? String(reply) : undefined;
  if (key === undefined || !Object.hasOwn(table, key)) throw new UnknownScriptReply(script, reply);
  return table[key] as T;
}
