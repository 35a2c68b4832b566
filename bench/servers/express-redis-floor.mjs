// The floor of the fixed architecture: what an Express 5 process answering a 1 KiB record write
// costs when it does only what durability needs and nothing of Proofline's work. Per request:
// one Lua call that reserves a funding slot (ZPOPMIN on a pool, as the wallet's reserve script
// does), then one Lua call that stores the body in a hash, an outbox entry and the pool's commit
// (as the accept script does), then a small JSON answer. No authentication, no hashing, no
// transaction, no signature, no queue, no publication, no proof: the service does all of those
// on top of this. PORT, REDIS_URL and FLOOR_PROCESSES (default 1; >1 runs a node:cluster sharing
// PORT, as API_PROCESSES does) from the environment; bound to 127.0.0.1.
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const load = createRequire(path.join(root, 'package.json'));
const express = load('express');
const Redis = load('ioredis');

const processes = Number(process.env.FLOOR_PROCESSES ?? 1);
if (cluster.isPrimary && processes > 1) {
  for (let i = 0; i < processes; i++) cluster.fork();
} else {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  redis.defineCommand('reserve', {
    numberOfKeys: 2,
    lua: `local got = redis.call('ZPOPMIN', KEYS[1])
if #got == 0 then
  local n = redis.call('INCR', KEYS[2])
  return 'utxo:' .. n
end
redis.call('ZADD', KEYS[2] .. ':leased', ARGV[1], got[1])
return got[1]`,
  });
  redis.defineCommand('accept', {
    numberOfKeys: 3,
    lua: `redis.call('HSET', KEYS[1], 'bytes', ARGV[1], 'state', 'pending', 'at', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[4])
return 'OK'`,
  });
  const app = express();
  app.post('/w', express.raw({ type: () => true, limit: '2mb' }), async (req, res) => {
    const id = randomBytes(32).toString('hex');
    const now = String(Date.now());
    const utxo = await redis.reserve('floor:pool', 'floor:seq', now);
    await redis.accept(`floor:rec:${id}`, 'floor:outbox', 'floor:seq:leased', req.body, now, id, utxo);
    res.json({ txId: id });
  });
  app.listen(Number(process.env.PORT), '127.0.0.1');
}
