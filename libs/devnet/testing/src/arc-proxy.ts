import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sha256d, standardFromExtended, toDisplayHex } from '@proofline/chain-domain';

/** A submission the proxy received: one transaction of a `POST /v1/tx` or `/v1/txs`. */
export interface ProxiedSubmission {
  readonly txId: string;
  /** The hex ARC's `rawTx` field carried (EF or raw). */
  readonly hex: string;
  /** 460 when the proxy answered it, 200 when the node did. */
  readonly answered: 460 | 200;
}

export interface ArcProxy {
  readonly url: string;
  /** Answers the next `times` submissions of `txId` with ARC's 460 (no parent found). */
  refuse(txId: string, times?: number): void;
  /** Every transaction submitted through the proxy, in order. */
  readonly submissions: ProxiedSubmission[];
  close(): Promise<void>;
}

export interface ArcProxyOptions {
  /** The ARC (the devnet node) everything is passed to. */
  readonly target: string;
  /** Each `POST /v1/tx(s)` is answered this much later (an ARC waiting for the network); default 0. */
  readonly submissionDelayMs?: number;
}

/**
 * A loopback HTTP proxy in front of an ARC (the devnet node) that answers as a real ARC does
 * where the node does not: a submission delay, and 460 ("not extended format: parents not found",
 * ARC's problem body, appended after the successes in a `/v1/txs` answer) for the transactions a
 * test names. Everything else passes through unchanged. Specs and benchmarks only.
 */
export async function startArcProxy(o: ArcProxyOptions): Promise<ArcProxy> {
  const refusals = new Map<string, number>();
  const submissions: ProxiedSubmission[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      answer(req, Buffer.concat(chunks))
        .then(({ status, type, body }) => {
          res.writeHead(status, { 'Content-Type': type });
          res.end(body);
        })
        .catch((e: unknown) => {
          res.writeHead(502);
          res.end(String(e));
        });
    });
  });

  async function answer(
    req: http.IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; type: string; body: Buffer }> {
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length'),
    ) as Record<string, string>;
    const forward = async (path: string, payload?: Buffer | string) => {
      const r = await fetch(`${o.target}${path}`, {
        method: req.method ?? 'GET',
        headers,
        ...(req.method === 'POST'
          ? { body: typeof payload === 'string' ? payload : new Uint8Array(payload ?? body) }
          : {}),
      });
      return {
        status: r.status,
        type: r.headers.get('content-type') ?? 'application/json',
        body: Buffer.from(await r.arrayBuffer()),
      };
    };
    const submit = req.method === 'POST' && (req.url === '/v1/tx' || req.url === '/v1/txs');
    if (!submit) return forward(req.url ?? '/');
    if (o.submissionDelayMs) await new Promise((r) => setTimeout(r, o.submissionDelayMs));
    const parsed = JSON.parse(body.toString('utf8')) as { rawTx: string } | { rawTx: string }[];
    const items = (Array.isArray(parsed) ? parsed : [parsed]).map((i) => {
      const txId = toDisplayHex(sha256d(standardFromExtended(Buffer.from(i.rawTx, 'hex'))));
      const left = refusals.get(txId) ?? 0;
      if (left > 0) refusals.set(txId, left - 1);
      submissions.push({ txId, hex: i.rawTx, answered: left > 0 ? 460 : 200 });
      return { rawTx: i.rawTx, txId, refuse: left > 0 };
    });
    const json = (status: number, type: string, value: unknown) => ({
      status,
      type,
      body: Buffer.from(JSON.stringify(value)),
    });
    if (!Array.isArray(parsed)) {
      const only = items[0] as (typeof items)[number];
      return only.refuse ? json(460, 'application/problem+json', problem460(only.txId)) : forward('/v1/tx');
    }
    const passed = items.filter((i) => !i.refuse);
    const answered: unknown[] = [];
    if (passed.length > 0) {
      const r = await forward('/v1/txs', JSON.stringify(passed.map((i) => ({ rawTx: i.rawTx }))));
      if (r.status !== 200) return r;
      answered.push(...(JSON.parse(r.body.toString('utf8')) as unknown[]));
    }
    for (const i of items.filter((x) => x.refuse)) answered.push(problem460(i.txId));
    return json(200, 'application/json', answered);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refuse: (txId, times = 1) => refusals.set(txId, times),
    submissions,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** ARC's problem answer for a transaction whose parents it could not get (`ErrStatusTxFormat`). */
function problem460(txid: string) {
  return {
    type: 'https://bitcoin-sv.github.io/arc/#/errors?id=_460',
    title: 'Not extended format',
    status: 460,
    detail: 'Transaction is not in extended format',
    instance: null,
    txid,
    extraInfo: 'failed to get parent transactions',
  };
}
