// Starts a private redis-server on a free port for the whole jest run, so tests never touch a
// shared Redis (nothing is FLUSHed, nothing collides). If PROOFLINE_TEST_REDIS_URL is already set
// (an outer runner, or a Redis the developer chose), that one is used and nothing is started.
const { spawn, execFileSync } = require('node:child_process');
const net = require('node:net');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.setTimeout(500);
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      sock.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    sock.on('error', () => resolve(false));
    sock.on('timeout', () => {
      sock.destroy();
      resolve(false);
    });
  });
}

module.exports = async function globalSetup() {
  if (process.env.PROOFLINE_TEST_REDIS_URL) return;
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('Tests need redis-server on PATH (apt-get install redis-server) or PROOFLINE_TEST_REDIS_URL.');
  }
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proofline-test-redis-'));
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore', detached: false },
  );
  for (let i = 0; i < 100; i += 1) {
    if (await ping(port)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!(await ping(port))) throw new Error(`test redis-server did not start on port ${port}`);
  process.env.PROOFLINE_TEST_REDIS_URL = `redis://127.0.0.1:${port}`;
  globalThis.__PROOFLINE_REDIS__ = { child, dir };
};
