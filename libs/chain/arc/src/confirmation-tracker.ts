import { heldByArc } from '@proofline/chain-domain';
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
  /** ARC reported SEEN_ON_NETWORK or MINED (proven or not): the network has the transaction. */
  readonly seen: readonly string[];
  /** Known to ARC but not mined yet (or MINED without block data). */
  readonly waiting: readonly { readonly txId: string; readonly status: string }[];
  /**
   * Of `waiting`, those ARC holds below SEEN_ON_NETWORK with nothing in their way (a pending
   * status {@link heldByArc}: not an orphan): published, not yet seen.
   */
  readonly held: readonly string[];
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
  const held: string[] = [];
  const seen: string[] = [];
  const unknown: string[] = [];
  const rejected: Refusal[] = [];
  const errors: { txId: string; error: Error }[] = [];
  let next = 0;
  const lane = async () => {
    while (next < txIds.length) {
      const txId = txIds[next++] as string;
      try {
        const r = await client.status(txId);
        if (r.kind === 'accepted') seen.push(txId);
        if (r.kind === 'not-found') unknown.push(txId);
        else if (r.kind === 'accepted' && r.mined) claims.push({ txId, ...r.mined });
        else if (r.kind === 'refused' || r.kind === 'request-problem') rejected.push(r);
        else {
          waiting.push({ txId, status: r.status });
          if (r.kind === 'pending' && heldByArc(r)) held.push(txId);
        }
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
  return { ...proved, seen, waiting, held, unknown, rejected, errors, tipHeight: await tip };
}
