// Every key of the given Redis nodes with its LFU access counter (`OBJECT FREQ`), for
// bench/cluster-spread.sh's busiest-key figure. One line per key: `host:port<TAB>freq<TAB>key`,
// the key JSON-quoted (names may hold any byte). The nodes must run an LFU maxmemory-policy;
// `SCAN` and `OBJECT FREQ` do not touch a key, so reading the counters does not move them.
//
//   node bench/cluster-keys.mjs 127.0.0.1:7001 127.0.0.1:7002 … > snapshot.tsv
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const Redis = createRequire(path.join(root, 'package.json'))('ioredis');

const out = [];
for (const node of process.argv.slice(2)) {
  const [host, port] = node.split(':');
  const redis = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scanBuffer(cursor, 'COUNT', 1000);
    cursor = next.toString();
    const pipe = redis.pipeline();
    for (const key of keys) pipe.object('FREQ', key);
    const freqs = await pipe.exec();
    keys.forEach((key, i) => {
      const [err, freq] = freqs[i];
      // a key deleted between SCAN and OBJECT FREQ answers nil or an error: not counted
      if (!err && typeof freq === 'number') out.push(`${node}\t${freq}\t${JSON.stringify(key.toString('latin1'))}`);
    });
    if (out.length >= 10_000) process.stdout.write(out.splice(0).join('\n') + '\n');
  } while (cursor !== '0');
  redis.disconnect();
}
if (out.length) process.stdout.write(out.join('\n') + '\n');
