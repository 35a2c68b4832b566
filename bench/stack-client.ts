// The client side the TypeScript benchmarks share: HTTP calls on a keep-alive agent, waiting, percentiles, stopping a child.
import { randomBytes } from 'node:crypto';
import http from 'node:http';

export interface Reply {
  readonly status: number;
  readonly body: string;
  readonly headers: http.IncomingHttpHeaders;
}

/** One HTTP call with an API key (`x-api-key`) on `agent`; the body, when given, as `type`. */
export function request(
  agent: http.Agent,
  base: string,
  method: string,
  p: string,
  key: string,
  body?: Buffer,
  type = 'application/octet-stream',
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const url = new URL(p, base);
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: { 'x-api-key': key, ...(body ? { 'content-type': type, 'content-length': body.length } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Resolves once `probe` answers true (a throwing probe counts as false); throws after `ms`. */
export async function waitFor(probe: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The p-th percentile of an ascending array (NaN when empty). */
export const pct = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** Sends SIGTERM and resolves once the process has exited (SIGKILL after `graceMs`): the launcher's own. */
export { stopChild as stopProcess } from '../apps/launcher/src/services';

/** A fresh bootstrap API key in the service's format (`idty_` and 32 letters or digits). */
export function newApiKey(): string {
  return `idty_${randomBytes(24)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .padEnd(32, 'x')
    .slice(0, 32)}`;
}
