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
