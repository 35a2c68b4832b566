import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may never reach unless private delivery is allowed: loopback, private,
 * link-local (cloud metadata 169.254.169.254 included), carrier-grade NAT, unspecified,
 * multicast/reserved, and their IPv6 forms (::1, fc00::/7 incl. fd00::/8, fe80::/10,
 * IPv4-mapped addresses of any of them).
 */
// Two lists: a BlockList matches an IPv4 address against IPv6 rules through its mapped form, so
// the v6 list's ::ffff:0:0/96 would otherwise block every IPv4 address.
const blocked = new BlockList();
const blocked6 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
  // IPv4-mapped (::ffff:a.b.c.d in any spelling): a public IPv4 host is reachable as itself.
  ['::ffff:0:0', 96],
] as const)
  blocked6.addSubnet(net, prefix, 'ipv6');

/** True when `address` (an IP literal) is one a webhook may not reach by default; non-IPs are refused too. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0] ?? '';
  const family = isIP(bare);
  if (family === 0) return true;
  if (family === 4) return blocked.check(bare, 'ipv4');
  return blocked6.check(bare, 'ipv6');
}
