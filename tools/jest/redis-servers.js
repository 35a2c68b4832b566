// Starts private redis-server processes for a test run or a benchmark: a standalone Redis, a
// one-node Redis Cluster (one master holding all 16384 slots: it refuses every cross-slot command,
// and a `#!lua` script's key of another slot, as a bigger cluster would) or a three-master
// cluster. Nothing is persisted; each server lives in its own temporary directory.
const { spawn, execFileSync } = require('node:child_process');
const net = require('node:net');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const TOPOLOGIES = ['standalone', 'cluster1', 'cluster3'];

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

/** Sends one inline command and resolves with the first reply line ('' when the server is not there). */
function ask(port, command) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let reply = '';
    sock.setTimeout(1000);
    sock.on('connect', () => sock.write(`${command}\r\n`));
    sock.on('data', (d) => {
      reply += d.toString();
      if (reply.includes('\r\n')) {
        sock.destroy();
        resolve(reply);
      }
    });
    sock.on('error', () => resolve(''));
    sock.on('timeout', () => {
      sock.destroy();
      resolve('');
    });
  });
}

async function until(what, probe, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`test redis: ${what} within ${timeoutMs} ms`);
}

async function startServer(dir, cluster) {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  args.push('--dir', dir, '--maxmemory-policy', 'noeviction');
  // A node announces the address clients dial: a lone node (cluster1) knows no address of its own
  // until another node meets it, and cluster clients skip a node announced without one.
  if (cluster)
    args.push(
      ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`],
      ...['--cluster-announce-ip', '127.0.0.1'],
    );
  const child = spawn('redis-server', args, { stdio: 'ignore', detached: false });
  await until(`redis-server did not answer on port ${port}`, async () => (await ask(port, 'PING')).startsWith('+PONG'));
  return { port, child };
}

/**
 * Starts the topology and resolves with `{ url, nodes, topology, stop }`: `url` names the first
 * node (a cluster client discovers the rest from it), `nodes` every `host:port`.
 */
async function startRedis(topology = 'standalone') {
  if (!TOPOLOGIES.includes(topology))
    throw new Error(`unknown Redis topology ${topology}: one of ${TOPOLOGIES.join(', ')}`);
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('Tests need redis-server on PATH (apt-get install redis-server) or PROOFLINE_TEST_REDIS_URL.');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `proofline-test-redis-${topology}-`));
  const count = topology === 'cluster3' ? 3 : 1;
  const servers = await Promise.all(Array.from({ length: count }, () => startServer(dir, topology !== 'standalone')));
  const stop = async () => {
    await Promise.all(
      servers.map(
        ({ child }) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', resolve);
            child.kill('SIGTERM');
            setTimeout(resolve, 3000).unref();
          }),
      ),
    );
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (topology === 'cluster1') {
      await ask(servers[0].port, 'CLUSTER ADDSLOTSRANGE 0 16383');
    } else if (topology === 'cluster3') {
      execFileSync(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...servers.map((s) => `127.0.0.1:${s.port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { stdio: 'ignore' },
      );
    }
    if (topology !== 'standalone') {
      for (const { port } of servers) {
        await until(`cluster node ${port} did not reach cluster_state:ok`, async () =>
          (await ask(port, 'CLUSTER INFO')).includes('cluster_state:ok'),
        );
      }
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    topology,
    url: `redis://127.0.0.1:${servers[0].port}`,
    nodes: servers.map((s) => `127.0.0.1:${s.port}`),
    stop,
  };
}

module.exports = { startRedis, TOPOLOGIES };
