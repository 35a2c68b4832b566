// An ARC-answering proxy whose rules a spec writes per request (answer, refuse, pass through): the readers' cases.
import { Transaction } from '@bsv/sdk';
import { startLoopbackServer } from '@proofline/shared-testing';
import type { ReceivedRequest } from '@proofline/shared-testing';

/** A request the proxy received, its body read. */
export type ProxiedRequest = ReceivedRequest;

/** What the proxy answers in ARC's stead: a status and a JSON body. */
export interface ArcAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * Decides one request: an answer of its own (ARC's own answer shape, e.g. a 400 problem about the
 * request or a 465 naming a txid), `'forward'` (the devnet node answers), or `'forward-then'`
 * with a function that rewrites the node's JSON answer (e.g. a SEEN_ON_NETWORK reported as STORED,
 * as ARC answers when `X-WaitFor` times out).
 */
export type ArcRule = (
  req: ProxiedRequest,
) => ArcAnswer | 'forward' | { readonly rewrite: (status: number, body: unknown) => ArcAnswer };

export interface ArcRuleProxy {
  readonly url: string;
  readonly requests: ProxiedRequest[];
  /** The rule for the next requests (default: forward everything). */
  rule: ArcRule;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 (port 0) in front of the devnet node, answering as ARC does
 * where the node does not (yet): every request is forwarded unless the spec's rule answers it
 * itself or rewrites the node's answer. Tests only.
 */
export async function startArcRuleProxy(upstream: string): Promise<ArcRuleProxy> {
  const proxy: { rule: ArcRule } = { rule: () => 'forward' };
  const server = await startLoopbackServer((request, res) => {
    void answer(upstream, request, proxy.rule(request)).then(
      ({ status, body, contentType }) => {
        res.writeHead(status, { 'Content-Type': contentType });
        res.end(body);
      },
      (err: unknown) => {
        res.writeHead(502, { 'Content-Type': 'text/plain' });
        res.end(String(err));
      },
    );
  });
  return {
    url: server.url,
    requests: server.requests,
    get rule() {
      return proxy.rule;
    },
    set rule(r: ArcRule) {
      proxy.rule = r;
    },
    close: server.close,
  };
}

async function answer(
  upstream: string,
  req: ProxiedRequest,
  decision: ReturnType<ArcRule>,
): Promise<{ status: number; body: string; contentType: string }> {
  if (typeof decision === 'object' && !('rewrite' in decision)) return json(decision);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
  }
  const res = await fetch(`${upstream}${req.path}`, {
    method: req.method,
    headers,
    ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: req.body }),
  });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? 'application/json';
  if (decision === 'forward') return { status: res.status, body: text, contentType };
  return json(decision.rewrite(res.status, text ? (JSON.parse(text) as unknown) : null));
}

function json(a: ArcAnswer): { status: number; body: string; contentType: string } {
  const problem = a.status >= 400;
  return {
    status: a.status,
    body: JSON.stringify(a.body),
    contentType: problem ? 'application/problem+json' : 'application/json',
  };
}

/** The txIds a `POST /v1/tx` or `/v1/txs` body carries (raw or Extended Format hex), in order. */
export function submittedTxIds(req: ProxiedRequest): string[] {
  const parsed = JSON.parse(req.body || '[]') as { rawTx: string } | { rawTx: string }[];
  return (Array.isArray(parsed) ? parsed : [parsed]).map(({ rawTx }) =>
    (rawTx.slice(8, 20).toLowerCase() === '0000000000ef'
      ? Transaction.fromHexEF(rawTx)
      : Transaction.fromHex(rawTx)
    ).id('hex'),
  );
}

/** ARC's answer entry for `txId` at `txStatus` (a `/v1/tx` body, a `/v1/txs` element, a `GET /v1/tx` body). */
export function statusEntry(
  txId: string,
  txStatus: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    txid: txId,
    txStatus,
    status: 200,
    title: 'OK',
    timestamp: new Date().toISOString(),
    blockHash: null,
    blockHeight: null,
    merklePath: null,
    extraInfo: '',
    competingTxs: null,
    ...extra,
  };
}
