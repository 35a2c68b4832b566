#!/usr/bin/env node
/**
 * Reads a `redis-cli monitor` capture and prints the top-level commands per accepted record by
 * process role and by command and normalized first key (txIds, partition and bucket units,
 * UUIDs and long numbers folded), most frequent first. Used by bench/commands-by-role.sh:
 *
 *   node bench/commands-by-role.mjs <monitor.txt> <ss.txt> <procs.txt>
 *
 * `ss.txt`: `ss -tnp` lines of the clients' connections (local address and pid); `procs.txt`:
 * `<pid> <command line>` per client process (the app is the `apps/<name>/main` in it). Accepted
 * records are the accept scripts' SETs of a raw transaction (`…:records:tx:<txId>`) in the
 * capture. TOP (default 40) rows.
 */
import fs from 'node:fs';

const [monitorFile, ssFile, procsFile] = process.argv.slice(2);
if (!procsFile) {
  process.stderr.write('usage: commands-by-role.mjs <monitor.txt> <ss.txt> <procs.txt>\n');
  process.exit(2);
}
const top = Number(process.env.TOP ?? 40);

const roleOfPid = new Map();
for (const line of fs.readFileSync(procsFile, 'utf8').split('\n')) {
  const [pid, ...cmd] = line.split(' ');
  if (pid) roleOfPid.set(pid, /apps\/(\w+)\/main/.exec(cmd.join(' '))?.[1] ?? 'other');
}
const roleOfAddress = new Map();
for (const line of fs.readFileSync(ssFile, 'utf8').split('\n')) {
  const fields = line.trim().split(/\s+/);
  const pid = /pid=(\d+)/.exec(line)?.[1];
  if (pid && fields[3]) roleOfAddress.set(fields[3], roleOfPid.get(pid) ?? 'other');
}

const normalize = (key) =>
  key
    .replace(/[0-9a-f]{64}/g, '<txId>')
    .replace(/\{(r|ix|atx)[0-9]+\.[0-9]+\}/g, '{$1N}')
    .replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/g, '<uuid>')
    .replace(/\d{4,}/g, '<n>');
const quoted = /"((?:[^"\\]|\\.)*)"/g;
const counts = new Map();
const byRole = new Map();
let records = 0;
for (const line of fs.readFileSync(monitorFile, 'utf8').split('\n')) {
  const m = /^[\d.]+ \[\d+ ([^\]]+)\] (.*)$/.exec(line);
  if (!m) continue;
  const args = [...m[2].matchAll(quoted)].map((a) => a[1]);
  if (args.length === 0) continue;
  const command = args[0].toLowerCase();
  if (m[1] === 'lua') {
    if (command === 'set' && args[1]?.includes(':records:tx:')) records++;
    continue;
  }
  const role = roleOfAddress.get(m[1]) ?? '?';
  const name = command.startsWith('eval')
    ? `${command} ${args[1].slice(0, 8)} ${args[2] !== '0' && args[3] ? normalize(args[3]) : ''}`
    : `${command} ${args[1] ? normalize(args[1]) : ''}`;
  const key = `${role}\t${name}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  byRole.set(role, (byRole.get(role) ?? 0) + 1);
}
if (records === 0) {
  console.log('commands-by-role: no record was accepted during the capture');
  process.exit(1);
}
const perRecord = (n) => (n / records).toFixed(3);
console.log(
  `commands per accepted record (${records} records in the capture), by role: ${[...byRole]
    .map(([role, n]) => `${role} ${perRecord(n)}`)
    .join(' | ')}`,
);
for (const [key, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  const [role, name] = key.split('\t');
  console.log(`${perRecord(n).padStart(8)}  ${role.padEnd(8)} ${name}`);
}
