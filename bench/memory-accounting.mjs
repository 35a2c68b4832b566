// Where Redis memory per record goes: every key of the given nodes, grouped into families (the key
// with its hash tag's number, hex ids and numbers replaced by placeholders), with each family's
// key count, encodings and `MEMORY USAGE … SAMPLES 0` (the whole value, its key name and its main
// dict entry). Two snapshots, one before a load and one after, give each family's bytes per
// record; the table ends with the sum of the families beside the nodes' `used_memory` delta. What
// MEMORY USAGE leaves out is the rest: the main dict's bucket array (8 B per bucket, a power of
// two ≥ the key count, so 8–16 B a key), the expires dict (a key with a TTL: an entry and a
// bucket), cluster mode's per-slot key bookkeeping (Redis 7.0: two pointers of dict-entry
// metadata, 16 B a key) and non-data memory (client and AOF buffers, the Lua script cache).
//
//   node bench/memory-accounting.mjs snapshot host:port … > before.json
//   node bench/memory-accounting.mjs snapshot host:port … > after.json
//   node bench/memory-accounting.mjs table <records> before.json after.json
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const Redis = createRequire(path.join(root, 'package.json'))('ioredis');

/** The family of a key: hash-tag numbers, hex ids and long numbers replaced. */
export function family(key) {
  return key
    .replace(/\{([a-z]+)[0-9]+\.[0-9]+\}/g, '{$1*}')
    .replace(/[0-9a-f]{64}/g, '<txid>')
    .replace(/[0-9a-f]{16,}/g, '<hex>')
    .replace(/:[0-9]+(?=:|$)/g, ':<n>');
}

export async function snapshot(nodes) {
  const families = {};
  let usedMemory = 0;
  let keys = 0;
  for (const node of nodes) {
    const [host, port] = node.split(':');
    const redis = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const info = await redis.info('memory');
    usedMemory += Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
    let cursor = '0';
    do {
      const [next, batch] = await redis.scanBuffer(cursor, 'COUNT', 1000);
      cursor = next.toString();
      const pipe = redis.pipeline();
      for (const key of batch) {
        pipe.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
        pipe.object('ENCODING', key);
        pipe.pttl(key);
      }
      const replies = await pipe.exec();
      batch.forEach((key, i) => {
        const [e1, bytes] = replies[3 * i];
        const [, encoding] = replies[3 * i + 1];
        const [, ttl] = replies[3 * i + 2];
        if (e1 || typeof bytes !== 'number') return; // deleted since SCAN
        const f = family(key.toString('latin1'));
        const entry = (families[f] ??= {
          keys: 0,
          bytes: 0,
          encodings: {},
          withTtl: 0,
          sample: key.toString('latin1'),
        });
        entry.keys += 1;
        entry.bytes += bytes;
        entry.encodings[encoding] = (entry.encodings[encoding] ?? 0) + 1;
        if (typeof ttl === 'number' && ttl >= 0) entry.withTtl += 1;
        keys += 1;
      });
    } while (cursor !== '0');
    // one key of each family described: a string's length, a small hash's field → value lengths
    for (const entry of Object.values(families)) {
      if (entry.node !== undefined) continue;
      const type = await redis.type(entry.sample);
      if (type === 'none') continue;
      entry.node = node;
      if (type === 'string') entry.shape = `${await redis.strlen(entry.sample)} B`;
      else if (type === 'hash' && (await redis.hlen(entry.sample)) <= 12) {
        const flat = await redis.hgetallBuffer(entry.sample);
        entry.shape = Object.entries(flat)
          .map(([f, v]) => `${f.length}+${v.length}`)
          .join(' ');
        const names = Object.keys(flat);
        if (names.every((f) => /^[\x20-\x7e]*$/.test(f))) entry.fields = names.join(','); // binary fields: lengths only
      } else entry.shape = type;
    }
    redis.disconnect();
  }
  return { nodes, usedMemory, keys, families };
}

export function table(records, before, after) {
  const rows = [];
  const names = new Set([...Object.keys(before.families), ...Object.keys(after.families)]);
  let sum = 0;
  for (const name of names) {
    const a = before.families[name] ?? { keys: 0, bytes: 0, encodings: {}, withTtl: 0 };
    const b = after.families[name] ?? { keys: 0, bytes: 0, encodings: {}, withTtl: 0 };
    const bytes = b.bytes - a.bytes;
    const keys = b.keys - a.keys;
    if (bytes === 0 && keys === 0) continue;
    sum += bytes;
    const enc = Object.entries(b.encodings)
      .map(([e, n]) => `${e}×${n}`)
      .join(' ');
    rows.push({ name, keys, bytes, enc, perKey: b.keys ? b.bytes / b.keys : 0, ttl: b.withTtl - a.withTtl });
  }
  rows.sort((x, y) => y.bytes - x.bytes);
  const per = (x) => (x / records).toFixed(1).padStart(8);
  console.log(
    `memory accounting: ${records} records; keys ${before.keys} → ${after.keys} (${per(after.keys - before.keys)} a record)`,
  );
  console.log(
    `${'B/record'.padStart(8)} ${'keys/rec'.padStart(8)} ${'B/key'.padStart(7)}  family (encodings after; +TTL keys)`,
  );
  for (const r of rows)
    console.log(
      `${per(r.bytes)} ${per(r.keys)} ${r.perKey.toFixed(0).padStart(7)}  ${r.name}  (${r.enc}${r.ttl ? `; +${r.ttl} with TTL` : ''})`,
    );
  const delta = after.usedMemory - before.usedMemory;
  const keysAdded = after.keys - before.keys;
  console.log('a sample of each of the largest families (string: value length; hash: field+value lengths):');
  for (const r of rows.slice(0, 8)) {
    const b = after.families[r.name];
    if (b?.shape) console.log(`  ${r.name}: ${b.shape}${b.fields ? ` (${b.fields})` : ''}`);
  }
  console.log(`${per(sum)}  sum of MEMORY USAGE`);
  console.log(`${per(delta)}  used_memory delta (every node)`);
  console.log(
    `${per(delta - sum)}  not in MEMORY USAGE (${((delta - sum) / Math.max(1, keysAdded)).toFixed(1)} B per key added: dict buckets, cluster slot bookkeeping, expires, buffers)`,
  );
}

const main = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (main) {
  // not when imported (bench/record-memory.ts)
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === 'snapshot') snapshot(args).then((s) => process.stdout.write(JSON.stringify(s) + '\n'));
  else if (cmd === 'table') {
    const [records, a, b] = args;
    table(Number(records), JSON.parse(readFileSync(a, 'utf8')), JSON.parse(readFileSync(b, 'utf8')));
  } else {
    console.error('usage: memory-accounting.mjs snapshot host:port … | table <records> before.json after.json');
    process.exit(2);
  }
}
