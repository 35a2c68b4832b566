import { z } from 'zod';

/** An integer within `min..max`, from its decimal text. */
export const intFrom = (min: number, max: number) =>
  z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(min).max(max);

/** A number (decimals allowed) within `min..max`, from its decimal text. */
export const numberFrom = (min: number, max: number) =>
  z.coerce.number({ error: 'must be a number' }).min(min).max(max);

/** An optional number within `min..max`: unset or blank = `undefined`. */
export const optionalNumberFrom = (min: number, max: number) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), numberFrom(min, max).optional());

/** An optional integer within `min..max`: unset or blank = `undefined` (the reader applies its default). */
export const optionalIntFrom = (min: number, max: number) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), intFrom(min, max).optional());

/** A comma-separated list of `allowed` names, matched case-insensitively, duplicates dropped. */
export const csvOf = <T extends string>(allowed: readonly T[], what: string) =>
  z.string().transform((value, ctx) => {
    const out: T[] = [];
    for (const item of splitList(value)) {
      const hit = allowed.find((a) => a.toLowerCase() === item.toLowerCase());
      if (!hit) {
        ctx.addIssue({ code: 'custom', message: `unknown ${what} "${item}" (allowed: ${allowed.join(', ')})` });
        return z.NEVER;
      }
      if (!out.includes(hit)) out.push(hit);
    }
    return out;
  });

/** The non-empty items of a comma-separated list, trimmed. */
export const splitList = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

/** A string that may be unset: unset, empty or blank = `undefined`. */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

/** An optional TCP port: unset or empty = not configured. */
export const optionalPort = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  intFrom(1, 65535).optional(),
);

export const httpUrl = z.string().regex(/^https?:\/\/\S+$/, 'must be an http(s) URL');

/** An optional http(s) URL (unset or blank = `undefined`). */
export const optionalHttpUrl = optionalString.refine(
  (v) => v === undefined || /^https?:\/\//.test(v),
  'must be an http(s) URL',
);

export const redisUrl = z.string().url('must be a redis:// URL');

/** An optional 32-byte key in hex, lowercased (unset or blank = `undefined`). */
export const optionalHexKey = optionalString
  .refine(
    (v) => v === undefined || /^[0-9a-fA-F]{64}$/.test(v),
    'must be 64 hex characters (generate one: openssl rand -hex 32)',
  )
  .transform((v) => v?.toLowerCase());

/** `true`/`1`/`yes`/`on` or `false`/`0`/`no`/`off`, any case; unset or blank = `fallback`. */
export const booleanFlag = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const t = v.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(t)) return true;
      if (['false', '0', 'no', 'off'].includes(t)) return false;
      ctx.addIssue({ code: 'custom', message: 'must be true or false' });
      return z.NEVER;
    });

/** A Redis node's address: `host:port`. */
export interface RedisNodeAddress {
  readonly host: string;
  readonly port: number;
}

/** Parses `host:port` (IPv6 in brackets: `[::1]:7000`). Throws an Error naming the text on anything else. */
export function parseNodeAddress(text: string): RedisNodeAddress {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:\s[\]=,]+):(\d{1,5})$/.exec(text.trim());
  const port = Number(m?.[2]);
  if (!m || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`"${text.trim()}" is not host:port (e.g. 10.0.0.5:6379)`);
  const host = m[1] ?? '';
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port };
}

/**
 * Translation of the addresses a cluster's nodes announce to the ones a client dials, keyed by the
 * announced `host:port` (ioredis `natMap`, node-redis `nodeAddressMap`).
 */
export type RedisNatMap = Readonly<Record<string, RedisNodeAddress>>;

/**
 * Parses `announced=reachable,...`, each side `host:port`
 * (`redis-1:6379=127.0.0.1:7001,redis-2:6379=127.0.0.1:7002`). Throws on a malformed entry.
 */
export function parseNatMap(text: string): RedisNatMap {
  const map: Record<string, RedisNodeAddress> = {};
  for (const entry of splitList(text)) {
    const [from, to, ...rest] = entry.split('=');
    if (from === undefined || to === undefined || rest.length > 0)
      throw new Error(`"${entry}" is not announced-host:port=reachable-host:port`);
    const announced = parseNodeAddress(from);
    map[`${announced.host}:${announced.port}`] = parseNodeAddress(to);
  }
  return map;
}

/** A zod schema from a parser that throws: unset or blank = `undefined`; a throw = the issue's message. */
const parsedBy = <T>(parse: (text: string) => T) =>
  z
    .string()
    .optional()
    .transform((v, ctx): T | undefined => {
      if (v === undefined || v.trim() === '') return undefined;
      try {
        return parse(v);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: e instanceof Error ? e.message : String(e) });
        return z.NEVER;
      }
    });

/** A comma-separated list of `host:port` (at least one), or unset. */
export const redisNodeList = parsedBy((v) => {
  const nodes = splitList(v).map(parseNodeAddress);
  if (nodes.length === 0) throw new Error('must list host:port,...');
  return nodes;
});

/** A NAT map (see {@link parseNatMap}), or unset. */
export const redisNatMap = parsedBy(parseNatMap);
