import { z } from 'zod';
import {
  isArcStatus,
  isHashHex,
  isRejectionCode,
  problemDetail,
  verdictOfProblem,
  verdictOfStatus,
} from '@proofline/chain-domain';
import type { ArcStatus, BroadcastVerdict } from '@proofline/chain-domain';
import { ArcAuthError, ArcTransientError } from './arc-errors';
import type { ArcTransientReason } from './arc-errors';

/** A transaction to broadcast: its txId and its bytes as raw or Extended Format (BIP-239) hex. */
export interface ArcSubmission {
  readonly txId: string;
  readonly hex: string;
}

/** `status()` adds: ARC answered 404 with its problem JSON, i.e. it does not know the tx. */
export type ArcStatusResult = BroadcastVerdict | { readonly kind: 'not-found'; readonly txId: string };

/** ARC's mining fee policy (`GET /v1/policy`). */
export interface ArcPolicy {
  /** miningFee as satoshis per 1000 bytes (may be fractional, e.g. 0.5). */
  readonly satoshisPerKb: number;
  /** `maxtxsizepolicy`: the largest transaction ARC accepts (474 above it); null when not given. */
  readonly maxTxSizePolicy: number | null;
  /** `maxscriptsizepolicy`: the node's largest script, in bytes; null when not given. */
  readonly maxScriptSizePolicy: number | null;
  readonly standardFormatSupported: boolean | null;
}

export interface ArcClientOptions {
  /** Base URL, e.g. `https://arc.taal.com` or the devnet's `http://127.0.0.1:9090`. */
  readonly url: string;
  /** Sent as `Authorization: Bearer`. */
  readonly apiKey?: string;
  /** Sent as `X-CallbackUrl` / `X-CallbackToken` with every submission (both or neither). */
  readonly callbackUrl?: string;
  readonly callbackToken?: string;
  /** Ask ARC for batched callbacks (`X-CallbackBatch`). */
  readonly callbackBatch?: boolean;
  /** Per-request deadline (AbortSignal.timeout); MUST exceed `maxTimeoutSeconds`. */
  readonly timeoutMs: number;
  /** `X-WaitFor`: the status a submission waits for (server default SEEN_ON_NETWORK). */
  readonly waitFor?: ArcStatus;
  /** `X-MaxTimeout` in seconds, 1–30 (server default 5). */
  readonly maxTimeoutSeconds?: number;
}

const successEntry = z.object({
  txid: z.string(),
  txStatus: z.string(),
  blockHash: z.string().nullish(),
  blockHeight: z.number().int().nonnegative().nullish(),
  merklePath: z.string().nullish(),
  extraInfo: z.string().nullish(),
  competingTxs: z.array(z.string()).nullish(),
  status: z.number().int().nullish(),
});
type SuccessEntry = z.infer<typeof successEntry>;

const problemBody = z.object({
  status: z.number().int(),
  title: z.string().nullish(),
  type: z.string().nullish(),
  detail: z.string().nullish(),
  txid: z.string().nullish(),
  extraInfo: z.string().nullish(),
});

const policyBody = z.object({
  policy: z.object({
    miningFee: z.object({ satoshis: z.number().nonnegative(), bytes: z.number().positive() }),
    maxtxsizepolicy: z.number().nullish(),
    maxscriptsizepolicy: z.number().nullish(),
    standardFormatSupported: z.boolean().nullish(),
  }),
});

interface HttpAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  readonly retryAfter: number | undefined;
}

/**
 * A client for ARC's public v1 HTTP API on Node's fetch, with a deadline on every request.
 * We do not use `@bsv/sdk`'s `ARC` broadcaster: it has no timeout, reports network faults as
 * HTTP 500, leaves `/v1/txs` answers unparsed and has no status query (research/arc.md §2).
 *
 * Outcomes are data (a {@link BroadcastVerdict}, read in chain-domain's broadcast-verdict.ts); it throws {@link ArcTransientError} (network, timeout,
 * 5xx, 429, 409, malformed or unknown answers; retry later with the same bytes) and
 * {@link ArcAuthError} (401/403).
 */
export class ArcClient {
  private readonly base: string;

  constructor(private readonly options: ArcClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
    const max = options.maxTimeoutSeconds;
    if (max !== undefined && (!Number.isInteger(max) || max < 1 || max > 30))
      throw new Error('maxTimeoutSeconds must be an integer from 1 to 30');
    if (max !== undefined && options.timeoutMs <= max * 1000)
      throw new Error('timeoutMs must exceed maxTimeoutSeconds');
    if ((options.callbackUrl === undefined) !== (options.callbackToken === undefined))
      throw new Error('callbackUrl and callbackToken go together');
  }

  /** POST /v1/tx. Re-submitting the same bytes is safe: ARC answers the stored status. */
  async submit(tx: ArcSubmission): Promise<BroadcastVerdict> {
    const txId = checkTxId(tx.txId);
    const answer = await this.request('POST', '/v1/tx', JSON.stringify({ rawTx: tx.hex }), this.submitHeaders());
    if (answer.status === 200) return this.fromEntry(parseJson(answer, successEntry), txId);
    this.throwIfTransientOrAuth(answer);
    if (isRejectionCode(answer.status))
      return verdictOfProblem(txId, answer.status, tryParse(answer.text, problemBody));
    throw unexpected(answer);
  }

  /**
   * POST /v1/txs. ARC answers a bare array, successes first and failures appended, so results are
   * matched by txId and returned in the order of `txs`. A tx missing from the answer gets an
   * {@link ArcTransientError} in its slot; a whole-batch refusal (400/46x for the request) throws
   * one with reason `batch-refused` (submit the txs one by one to find the culprit).
   */
  async submitMany(txs: readonly ArcSubmission[]): Promise<(BroadcastVerdict | ArcTransientError)[]> {
    if (txs.length === 0) return [];
    const ids = txs.map((t) => checkTxId(t.txId));
    const body = JSON.stringify(txs.map((t) => ({ rawTx: t.hex })));
    const answer = await this.request('POST', '/v1/txs', body, this.submitHeaders());
    if (answer.status !== 200) {
      this.throwIfTransientOrAuth(answer);
      if (isRejectionCode(answer.status)) {
        const detail = problemDetail(answer.status, tryParse(answer.text, problemBody));
        throw new ArcTransientError('batch-refused', `the batch was refused: ${detail}`, answer.status);
      }
      throw unexpected(answer);
    }
    const entries = parseJson(answer, z.array(z.unknown()));
    const byTxId = new Map<string, BroadcastVerdict | ArcTransientError>();
    for (const raw of entries) {
      const entry = this.fromBatchEntry(raw);
      if (entry) byTxId.set(entry.txId, entry.result);
    }
    return ids.map(
      (id) =>
        byTxId.get(id) ??
        new ArcTransientError('missing-in-batch', `the /v1/txs answer has no entry for ${id}`, answer.status),
    );
  }

  /** GET /v1/tx/{txid}. `not-found` only on a 404 carrying ARC's problem JSON. */
  async status(txIdIn: string): Promise<ArcStatusResult> {
    const txId = checkTxId(txIdIn);
    const answer = await this.request('GET', `/v1/tx/${txId}`);
    if (answer.status === 200) return this.fromEntry(parseJson(answer, successEntry), txId);
    if (answer.status === 404) {
      const problem = tryParse(answer.text, problemBody);
      // A proxy or a wrong base URL also answers 404; only ARC's own problem body means "unknown tx".
      if (
        problem &&
        problem.status === 404 &&
        (problem.type || problem.title) &&
        (!problem.txid || problem.txid === txId)
      ) {
        return { kind: 'not-found', txId };
      }
      throw new ArcTransientError(
        'not-found-without-problem',
        `GET /v1/tx/${txId} answered 404 without ARC's problem body`,
        404,
      );
    }
    this.throwIfTransientOrAuth(answer);
    throw unexpected(answer);
  }

  /** GET /v1/policy: the mining fee as satoshis per kB and the size limits. */
  async policy(): Promise<ArcPolicy> {
    const answer = await this.request('GET', '/v1/policy');
    if (answer.status !== 200) {
      this.throwIfTransientOrAuth(answer);
      throw unexpected(answer);
    }
    const { policy } = parseJson(answer, policyBody);
    return {
      satoshisPerKb: (policy.miningFee.satoshis * 1000) / policy.miningFee.bytes,
      maxTxSizePolicy: policy.maxtxsizepolicy ?? null,
      maxScriptSizePolicy: policy.maxscriptsizepolicy ?? null,
      standardFormatSupported: policy.standardFormatSupported ?? null,
    };
  }

  private submitHeaders(): Record<string, string> {
    const o = this.options;
    const h: Record<string, string> = {};
    if (o.callbackUrl !== undefined && o.callbackToken !== undefined) {
      h['X-CallbackUrl'] = o.callbackUrl;
      h['X-CallbackToken'] = o.callbackToken;
      if (o.callbackBatch) h['X-CallbackBatch'] = 'true';
    }
    if (o.waitFor) h['X-WaitFor'] = o.waitFor;
    if (o.maxTimeoutSeconds !== undefined) h['X-MaxTimeout'] = String(o.maxTimeoutSeconds);
    return h;
  }

  private async request(
    method: 'GET' | 'POST',
    path: string,
    body?: string,
    extra: Record<string, string> = {},
  ): Promise<HttpAnswer> {
    const headers: Record<string, string> = { Accept: 'application/json', ...extra };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (this.options.apiKey) headers['Authorization'] = `Bearer ${this.options.apiKey}`;
    const what = `${method} ${path}`;
    try {
      const res = await fetch(`${this.base}${path}`, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const text = await res.text();
      return {
        status: res.status,
        contentType: res.headers.get('content-type') ?? '',
        text,
        retryAfter: retryAfterSeconds(res.headers.get('retry-after')),
      };
    } catch (e) {
      const name = (e as { name?: string } | null)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw new ArcTransientError(
          'timeout',
          `${what} gave no answer within ${this.options.timeoutMs} ms`,
          undefined,
          e,
        );
      }
      throw new ArcTransientError('network', `${what} failed: ${describeNetworkError(e)}`, undefined, e);
    }
  }

  private throwIfTransientOrAuth(answer: HttpAnswer): void {
    const s = answer.status;
    if (s === 401 || s === 403) throw new ArcAuthError(s, tryParse(answer.text, problemBody)?.detail ?? 'no detail');
    const reason: ArcTransientReason | null =
      s === 429 ? 'rate-limited' : s === 409 ? 'conflict' : s >= 500 ? 'server-error' : null;
    if (reason)
      throw new ArcTransientError(reason, `HTTP ${s}${problemSuffix(answer)}`, s, undefined, answer.retryAfter);
  }

  /** One `/v1/txs` element: a success entry (has txStatus) or a failure entry (problem fields + txid). */
  private fromBatchEntry(raw: unknown): { txId: string; result: BroadcastVerdict | ArcTransientError } | null {
    const ok = successEntry.safeParse(raw);
    if (ok.success) {
      const txId = ok.data.txid.toLowerCase();
      try {
        return { txId, result: this.fromEntry(ok.data, txId) };
      } catch (e) {
        if (e instanceof ArcTransientError) return { txId, result: e };
        throw e;
      }
    }
    const failed = problemBody.safeParse(raw);
    if (!failed.success || !failed.data.txid) return null;
    const txId = failed.data.txid.toLowerCase();
    const code = failed.data.status;
    if (isRejectionCode(code)) return { txId, result: verdictOfProblem(txId, code, failed.data) };
    return {
      txId,
      result: new ArcTransientError(
        code === 429 ? 'rate-limited' : code >= 500 ? 'server-error' : code === 409 ? 'conflict' : 'unexpected-status',
        `entry for ${txId}: status ${code}`,
        code,
      ),
    };
  }

  private fromEntry(e: SuccessEntry, txId: string): BroadcastVerdict {
    if (e.txid.toLowerCase() !== txId)
      throw new ArcTransientError('malformed-response', `ARC answered for ${e.txid}, not ${txId}`, 200);
    if (!isArcStatus(e.txStatus))
      throw new ArcTransientError('unknown-status', `unknown ARC status "${e.txStatus.slice(0, 60)}" for ${txId}`, 200);
    return verdictOfStatus(txId, { ...e, txStatus: e.txStatus });
  }
}

function checkTxId(txId: string): string {
  const id = txId.toLowerCase();
  if (!isHashHex(id)) throw new Error(`not a txId: ${txId.slice(0, 80)}`);
  return id;
}

function parseJson<T>(answer: HttpAnswer, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(answer.text);
  } catch {
    throw new ArcTransientError(
      'malformed-response',
      `HTTP ${answer.status} with a body that is not JSON`,
      answer.status,
    );
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new ArcTransientError(
      'malformed-response',
      `HTTP ${answer.status} with an unexpected body: ${parsed.error.issues[0]?.message ?? ''}`,
      answer.status,
    );
  return parsed.data;
}

function tryParse<T>(text: string, schema: z.ZodType<T>): T | null {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function problemSuffix(answer: HttpAnswer): string {
  const detail = tryParse(answer.text, problemBody)?.detail;
  return detail ? `: ${detail.slice(0, 200)}` : '';
}

function unexpected(answer: HttpAnswer): ArcTransientError {
  return new ArcTransientError(
    'unexpected-status',
    `unexpected HTTP ${answer.status}${problemSuffix(answer)}`,
    answer.status,
    undefined,
    answer.retryAfter,
  );
}

function retryAfterSeconds(value: string | null): number | undefined {
  if (!value) return undefined;
  const n = Number(value);
  if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function describeNetworkError(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
}
