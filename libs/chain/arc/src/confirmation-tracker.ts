import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { isHashHex } from '@proofline/chain-domain';
import type { ChainHeader, HeadersSource, Refusal } from '@proofline/chain-domain';
import type { ArcStatusResult } from './arc-client';
import { verifyBump } from './bump';
import type { MinedClaim, ProofFailure, VerifiedProof } from './bump';
import type { ArcProofStore } from './proof-store';

/** The little of a logger the tracker uses (pino's Logger fits). */
export interface TrackerLogger {
  warn(obj: object, msg: string): void;
}

/** What proving needs. */
export interface ProofDeps {
  readonly headers: HeadersSource;
  readonly store: ArcProofStore;
  readonly logger?: TrackerLogger;
}

export interface ProveReport {
  /** TxIds whose proof was verified and stored. */
  readonly proven: readonly string[];
  /** Proofs refused (never stored): logged; the tx stays waiting and is polled again. */
  readonly failed: readonly ProofFailure[];
  /** The distinct blocks the stored proofs are in. */
  readonly blocks: readonly { readonly hash: string; readonly height: number }[];
}

/**
 * Verifies MINED claims against headers (one header fetch per distinct block) and stores the
 * proofs that pass, in one MULTI. Headers-source faults leave the affected claims out as
 * `HEADER_UNAVAILABLE` failures (retried later); nothing unverified is ever stored.
 */
export async function proveMined(deps: ProofDeps, claims: readonly MinedClaim[]): Promise<ProveReport> {
  const headerOf = new Map<string, Promise<ChainHeader | null | Error>>();
  const verified: VerifiedProof[] = [];
  const failed: ProofFailure[] = [];
  for (const claim of claims) {
    let pending = headerOf.get(claim.blockHash);
    if (!pending) {
      pending = deps.headers
        .headerByHash(claim.blockHash)
        .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
      headerOf.set(claim.blockHash, pending);
    }
    const header = await pending;
    const outcome =
      header instanceof Error
        ? ({ ok: false, txId: claim.txId, reason: 'HEADER_UNAVAILABLE', detail: header.message } satisfies ProofFailure)
        : verifyBump(claim, header);
    if (outcome.ok) verified.push(outcome);
    else failed.push(outcome);
  }
  await deps.store.storeProofs(verified);
  for (const f of failed)
    deps.logger?.warn(
      { txId: f.txId, reason: f.reason, detail: f.detail },
      'ARC proof refused; the transaction stays waiting',
    );
  const blocks = new Map(verified.map((v) => [v.blockHash, v.blockHeight]));
  return {
    proven: verified.map((v) => v.txId),
    failed,
    blocks: [...blocks].map(([hash, height]) => ({ hash, height })),
  };
}

/** The status query the tracker needs (ArcClient fits). */
export interface StatusSource {
  status(txId: string): Promise<ArcStatusResult>;
}

export interface TrackOptions extends ProofDeps {
  readonly client: StatusSource;
  readonly txIds: readonly string[];
  /** Status queries in flight at once (default 8). */
  readonly concurrency?: number;
}

export interface TrackReport extends ProveReport {
  /** Known to ARC but not mined yet (or MINED without block data). */
  readonly waiting: readonly { readonly txId: string; readonly status: string }[];
  /** ARC answered 404 with its problem body: broadcast the same bytes again. */
  readonly unknown: readonly string[];
  /** Refusals ARC reported while polling (REJECTED, DOUBLE_SPEND_ATTEMPTED). */
  readonly rejected: readonly Refusal[];
  /** Status queries that failed transiently (retry later). */
  readonly errors: readonly { readonly txId: string; readonly error: Error }[];
  /** The tip reported by the headers source during this run (also stored), or null if it failed. */
  readonly tipHeight: number | null;
}

/**
 * One polling pass, the ground truth behind callbacks: `GET /v1/tx/{txid}` for each txId with
 * bounded concurrency; MINED answers are verified against the headers source and stored. Also
 * refreshes the stored tip. Never throws for one transaction's fault; see {@link TrackReport}.
 */
export async function trackConfirmations(options: TrackOptions): Promise<TrackReport> {
  const { client, txIds } = options;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const claims: MinedClaim[] = [];
  const waiting: { txId: string; status: string }[] = [];
  const unknown: string[] = [];
  const rejected: Refusal[] = [];
  const errors: { txId: string; error: Error }[] = [];
  let next = 0;
  const lane = async () => {
    while (next < txIds.length) {
      const txId = txIds[next++] as string;
      try {
        const r = await client.status(txId);
        if (r.kind === 'not-found') unknown.push(txId);
        else if (r.kind === 'accepted' && r.mined) claims.push({ txId, ...r.mined });
        else if (r.kind === 'refused' || r.kind === 'request-problem') rejected.push(r);
        else waiting.push({ txId, status: r.status });
      } catch (e) {
        errors.push({ txId, error: e instanceof Error ? e : new Error(String(e)) });
      }
    }
  };
  const tip = options.headers.tip().then(
    async (t) => {
      await options.store.setTip(t);
      return t.height;
    },
    () => null,
  );
  await Promise.all(Array.from({ length: Math.min(concurrency, txIds.length) }, lane));
  const proved = await proveMined(options, claims);
  return { ...proved, waiting, unknown, rejected, errors, tipHeight: await tip };
}

const hashHex = z
  .string()
  .transform((s) => s.toLowerCase())
  .refine(isHashHex, 'must be 64 hex characters');
const callbackItem = z.object({
  timestamp: z.string().nullish(),
  txid: hashHex,
  txStatus: z.string().min(1),
  extraInfo: z.string().nullish(),
  competingTxs: z.array(z.string()).nullish(),
  merklePath: z.string().nullish(),
  blockHash: z.string().nullish(),
  blockHeight: z.number().int().nonnegative().nullish(),
});
const callbackBody = z.union([
  z.object({ count: z.number().int().nonnegative(), callbacks: z.array(callbackItem).max(1000) }),
  callbackItem,
]);
export type ArcCallback = z.infer<typeof callbackItem>;

/** What the callback route answers; a wrong token or a bad body is data, not a throw. */
export type CallbackOutcome =
  | { readonly httpStatus: 401; readonly errorCode: 'ARC_CALLBACK_UNAUTHORIZED'; readonly detail: string }
  | { readonly httpStatus: 400; readonly errorCode: 'ARC_CALLBACK_INVALID'; readonly detail: string }
  | { readonly httpStatus: 200; readonly callbacks: readonly ArcCallback[] };

/**
 * Checks the `Authorization: Bearer <ARC_CALLBACK_TOKEN>` header in constant time and parses a
 * single or batch (`{count, callbacks[]}`) ARC callback. Fast and I/O free, so a route can answer
 * at once and enqueue the work.
 */
export function parseArcCallback(body: unknown, authorization: string | undefined, token: string): CallbackOutcome {
  const given = /^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '';
  if (!token || !constantTimeEqual(given, token)) {
    return { httpStatus: 401, errorCode: 'ARC_CALLBACK_UNAUTHORIZED', detail: 'missing or wrong callback token' };
  }
  const parsed = callbackBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      httpStatus: 400,
      errorCode: 'ARC_CALLBACK_INVALID',
      detail: `not an ARC callback: ${issue ? `${issue.path.join('.')} ${issue.message}` : 'invalid'}`,
    };
  }
  const callbacks = 'callbacks' in parsed.data ? parsed.data.callbacks : [parsed.data];
  return { httpStatus: 200, callbacks };
}

export type HandledCallback =
  | Exclude<CallbackOutcome, { httpStatus: 200 }>
  | ({ readonly httpStatus: 200; readonly hints: readonly ArcCallback[] } & ProveReport);

/**
 * Handles an ARC callback end to end: {@link parseArcCallback}, then every MINED item with block
 * data goes through the same verify-and-store path as polling ({@link proveMined}). Idempotent
 * (storing a proof again changes nothing). A callback is only a hint: the other statuses are
 * returned as `hints` for the caller to schedule a poll; polling stays the ground truth.
 */
export async function handleArcCallback(
  deps: ProofDeps & { readonly token: string },
  body: unknown,
  authorization: string | undefined,
): Promise<HandledCallback> {
  const outcome = parseArcCallback(body, authorization, deps.token);
  if (outcome.httpStatus !== 200) return outcome;
  const claims: MinedClaim[] = [];
  const hints: ArcCallback[] = [];
  for (const c of outcome.callbacks) {
    const blockHash = c.blockHash?.toLowerCase();
    if (c.txStatus === 'MINED' && c.merklePath && blockHash && isHashHex(blockHash) && c.blockHeight != null) {
      claims.push({ txId: c.txid, blockHash, blockHeight: c.blockHeight, merklePath: c.merklePath });
    } else hints.push(c);
  }
  const report = await proveMined(deps, claims);
  return { httpStatus: 200, hints, ...report };
}

function constantTimeEqual(a: string, b: string): boolean {
  // Hash first so the comparison takes the same time whatever the lengths.
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
