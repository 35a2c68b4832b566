// The floor under everything: node:http alone reading a POST body and answering a small JSON.
// PORT from the environment; bound to 127.0.0.1 (bench/write-throughput.sh).
import { createServer } from 'node:http';

createServer((req, res) => {
  let bytes = 0;
  req.on('data', (chunk) => {
    bytes += chunk.length;
  });
  req.on('end', () => {
    const body = JSON.stringify({ ok: true, n: bytes });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
