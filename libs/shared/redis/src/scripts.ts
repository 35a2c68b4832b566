import fs from 'node:fs';
import path from 'node:path';
import type { Redis } from 'ioredis';

/**
 * Registers Lua scripts named `<command>-<numberOfKeys>.lua` from `dir` as ioredis commands
 * (EVALSHA with automatic reload), the way BullMQ loads `src/commands`. Returns the names.
 */
export function loadLuaCommands(redis: Redis, dir: string): string[] {
  const names: string[] = [];
  for (const file of fs.readdirSync(dir)) {
    const m = /^(.+)-(\d+)\.lua$/.exec(file);
    if (!m) continue;
    const [, name, keys] = m as unknown as [string, string, string];
    const camel = name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (!(camel in redis)) {
      redis.defineCommand(camel, { numberOfKeys: Number(keys), lua: fs.readFileSync(path.join(dir, file), 'utf8') });
    }
    names.push(camel);
  }
  return names;
}
