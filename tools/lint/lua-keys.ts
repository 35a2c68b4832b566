/**
 * A static check of the Lua scripts for Redis Cluster (CLUSTER.md, rules 1-2): every script starts
 * with `#!lua` (Redis then refuses, on a cluster, any key the script did not declare), and every
 * key a script passes to `redis.call` / `redis.pcall` comes from KEYS: `KEYS[i]`, a local bound
 * to one (`local k = KEYS[2]`, `for _, k in ipairs(KEYS)`), `unpack(KEYS)`, or a parameter of a
 * function of the script (a helper called with keys). A key built inside the script (`ARGV[1] ..
 * id`, a prefix passed in ARGV, a name read from a hash) is reported: on a cluster it may live on
 * another node than the script runs on. A line that passes a key the check cannot follow (a
 * table field holding one of KEYS) may say so with a comment `-- key from KEYS`.
 *
 * It reads the scripts as text (comments and strings stripped), not as a Lua parser would: it
 * understands the shapes the project's scripts use, and reports anything else as a finding rather
 * than guessing it is fine.
 */

/** Commands whose arguments are no keys (or that take none). */
const KEYLESS = new Set([
  'publish',
  'spublish',
  'time',
  'ping',
  'echo',
  'info',
  'cluster',
  'script',
  'dbsize',
  'randomkey',
  'select',
  'config',
]);

/** Commands every argument of which is a key. */
const ALL_KEYS = new Set(['del', 'unlink', 'exists', 'mget', 'touch', 'watch', 'sinter', 'sunion', 'sdiff']);

/** What a script is reported for. */
export interface LuaFinding {
  readonly line: number;
  readonly message: string;
}

/** A script named `<name>-<N>.lua` / `<name>-n.lua` is run with keys; other `.lua` files are preludes pasted into scripts. */
export function isScriptFile(file: string): boolean {
  return /-(\d+|n)\.lua$/.test(file);
}

/** Replaces comments and the insides of string literals by spaces (keeping line numbers and quotes). */
export function stripLua(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const rest = source.slice(i);
    const long = /^--\[(=*)\[/.exec(rest) ?? /^\[(=*)\[/.exec(rest);
    if (long) {
      const isComment = rest.startsWith('--');
      const close = `]${long[1] ?? ''}]`;
      const end = source.indexOf(close, i + long[0].length);
      const stop = end < 0 ? source.length : end + close.length;
      const body = source.slice(i, stop).replace(/[^\n]/g, ' ');
      out += isComment ? body : `'${body.slice(1, -1)}'`;
      i = stop;
      continue;
    }
    if (rest.startsWith('--')) {
      const end = source.indexOf('\n', i);
      const stop = end < 0 ? source.length : end;
      out += ' '.repeat(stop - i);
      i = stop;
      continue;
    }
    const c = source[i] ?? '';
    if (c === "'" || c === '"') {
      let j = i + 1;
      let body = '';
      while (j < source.length && source[j] !== c && source[j] !== '\n') {
        if (source[j] === '\\') {
          body += '  ';
          j += 2;
          continue;
        }
        body += source[j];
        j += 1;
      }
      // Command names stay readable (redis.call('GET', ...)); other strings are blanked.
      out += c + (/^[A-Za-z]+$/.test(body) ? body : ' '.repeat(body.length)) + c;
      i = j + 1;
      continue;
    }
    out += c;
    i += 1;
  }
  return out;
}

/** The top-level comma-separated arguments of the call whose `(` is at `open`, and where it ends. */
function callArguments(code: string, open: number): { args: { text: string; at: number }[]; end: number } {
  const args: { text: string; at: number }[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < code.length; i++) {
    const c = code[i];
    if (c === '(' || c === '[' || c === '{') depth += 1;
    else if (c === ')' || c === ']' || c === '}') {
      depth -= 1;
      if (depth === 0) {
        args.push({ text: code.slice(start, i), at: start });
        return { args, end: i };
      }
    } else if (c === ',' && depth === 1) {
      args.push({ text: code.slice(start, i), at: start });
      start = i + 1;
    }
  }
  return { args, end: code.length };
}

/**
 * Names bound to keys or to tables of keys: locals assigned only from KEYS[...] (or KEYS itself),
 * loop variables over KEYS, function parameters. A name also assigned anything else is not one.
 */
function keyNames(code: string): Set<string> {
  const names = new Set<string>();
  const reassigned = new Set<string>();
  for (const m of code.matchAll(/(^|[\s;(])(local\s+)?([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=(?!=)\s*([^\n;]+)/gm)) {
    const at = (m.index ?? 0) + (m[1] ?? '').length;
    // Fields of a table constructor ({ key = key }) and `for i = 1, n` are not assignments of a name.
    if (depthAt(code, at, '{', '}') > 0 || /\bfor\s+$/.test(code.slice(0, at))) continue;
    const vars = (m[3] ?? '').split(',').map((v) => v.trim());
    const values = splitTopLevel(m[4] ?? '');
    vars.forEach((v, i) => {
      const value = (values[i] ?? '').trim();
      const isKeys = isKeysIndex(value) || value === 'KEYS';
      if (m[2] && isKeys) names.add(v);
      else if (!isKeys) reassigned.add(v);
    });
  }
  for (const m of code.matchAll(/\bfor\s+[A-Za-z_]\w*\s*,\s*([A-Za-z_]\w*)\s+in\s+i?pairs\(\s*KEYS\s*\)/g))
    if (m[1]) names.add(m[1]);
  for (const m of code.matchAll(/\bfunction\s*[\w.:]*\s*\(([^)]*)\)/g))
    for (const p of (m[1] ?? '').split(',')) if (p.trim() !== '' && p.trim() !== '...') names.add(p.trim());
  for (const r of reassigned) names.delete(r);
  return names;
}

/** How many `open` are unclosed before `at`. */
function depthAt(code: string, at: number, open: string, close: string): number {
  let depth = 0;
  for (let i = 0; i < at; i++) {
    if (code[i] === open) depth += 1;
    else if (code[i] === close) depth = Math.max(0, depth - 1);
  }
  return depth;
}

function splitTopLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth += 1;
    else if (c === ')' || c === ']' || c === '}') depth -= 1;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out;
}

/** `KEYS[<expr>]`, the index any expression (nested brackets included). */
const isKeysIndex = (expr: string): boolean => isIndexOf(expr, 'KEYS');

/** `name[<expr>]`: the bracket opened after `name` closes at the end of `expr`. */
function isIndexOf(expr: string, name: string): boolean {
  if (!expr.startsWith(`${name}[`) || !expr.endsWith(']')) return false;
  let depth = 0;
  for (let i = name.length; i < expr.length; i++) {
    if (expr[i] === '[') depth += 1;
    else if (expr[i] === ']' && --depth === 0) return i === expr.length - 1;
  }
  return false;
}

function isKeyExpression(expr: string, names: Set<string>): boolean {
  const e = expr.trim();
  if (isKeysIndex(e) || names.has(e) || /^(table\.)?unpack\(\s*KEYS\s*(,[^)]*)?\)$/.test(e)) return true;
  // An element of a table of keys (a helper's parameter `K`, `local K = KEYS`): K[k + 7].
  const table = /^([A-Za-z_]\w*)\[/.exec(e)?.[1];
  return table !== undefined && names.has(table) && isIndexOf(e, table);
}

/** A line its author marks as passing a key that came from KEYS in a way this check cannot follow (a table field). */
const VOUCHED = /--\s*key from KEYS\b/;

/** Every finding in one script's source (empty: the script may run on a cluster). */
export function checkLuaScript(source: string): LuaFinding[] {
  const findings: LuaFinding[] = [];
  if (!source.startsWith('#!lua')) findings.push({ line: 1, message: 'the first line is not #!lua' });
  const code = stripLua(source);
  const lineOf = (at: number) => code.slice(0, at).split('\n').length;
  const names = keyNames(code);
  const sourceLines = source.split('\n');
  for (const m of code.matchAll(/\bredis\.p?call\s*\(/g)) {
    const open = (m.index ?? 0) + m[0].length - 1;
    const { args } = callArguments(code, open);
    const command = /^\s*['"]([A-Za-z]+)['"]\s*$/.exec(args[0]?.text ?? '')?.[1]?.toLowerCase();
    if (command === undefined) {
      findings.push({ line: lineOf(open), message: 'a command whose name is not a literal' });
      continue;
    }
    if (KEYLESS.has(command)) continue;
    const keyArgs = ALL_KEYS.has(command) ? args.slice(1) : args.slice(1, 2);
    for (const arg of keyArgs) {
      if (isKeyExpression(arg.text, names) || VOUCHED.test(sourceLines[lineOf(arg.at) - 1] ?? '')) continue;
      findings.push({
        line: lineOf(arg.at),
        message: `${command.toUpperCase()} on a key not from KEYS: ${arg.text.trim().replace(/\s+/g, ' ')}`,
      });
    }
  }
  return findings;
}
