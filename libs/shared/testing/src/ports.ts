import fs from 'node:fs';
import net from 'node:net';

/** A TCP port that was free on 127.0.0.1 a moment ago (for servers a test or bench starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Listening IPv4 TCP sockets on `port` (Linux, /proc/net/tcp): one per process sharing the port
 * with reusePort, so a test can wait until a restarted process listens again.
 */
export function listeners(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  return fs
    .readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[1]?.endsWith(`:${hex}`) && f[3] === '0A').length;
}
