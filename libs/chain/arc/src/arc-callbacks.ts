import { createHash, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { isHashHex } from '@proofline/chain-domain';
import type { HeadersSource } from '@proofline/chain-domain';
import { publishBlockEvent } from './arc-blocks';
import { isArcStatus, verdictOfStatus } from './arc-verdict';
import type { MinedClaim } from './bump';
import { proveMined } from './confirmation-tracker';
import type { ProofDeps, ProveReport } from './confirmation-tracker';
import { cachingHeaders } from './headers-client';

/*
 * ARC's status callbacks (`X-CallbackUrl` / `X-CallbackToken`), end to end in one module:
 * authentication (the Bearer token, constant time), parsing (single or batched bodies), proving
 * (MINED items through the same verify-against-headers-then-store path as polling), then the
 * tip and block events of the blocks proven. A callback is only a hint: polling stays the ground
 * truth, so a lost or refused callback only delays a proof. The HTTP route is a thin adapter.
 */

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

/** A callback refused before any work: a wrong token (401) or a body that is not a callback (400). */
export type CallbackRefusal =
  | { readonly httpStatus: 401; readonly errorCode: 'ARC_CALLBACK_UNAUTHORIZED'; readonly detail: string }
  | { readonly httpStatus: 400; readonly errorCode: 'ARC_CALLBACK_INVALID'; readonly detail: string };

/** What the callback route answers; a wrong token or a bad body is data, not a throw. */
export type CallbackOutcome =
  CallbackRefusal | { readonly httpStatus: 200; readonly callbacks: readonly ArcCallback[] };

/**
 * Checks `Authorization: Bearer <ARC_CALLBACK_TOKEN>` in constant time; null when it matches.
 * An empty configured token matches nothing.
 */
export function authorizeArcCallback(authorization: string | undefined, token: string): CallbackRefusal | null {
  const given = /^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '';
  if (token && constantTimeEqual(given, token)) return null;
  return { httpStatus: 401, errorCode: 'ARC_CALLBACK_UNAUTHORIZED', detail: 'missing or wrong callback token' };
}

/**
 * Authenticates ({@link authorizeArcCallback}) and parses a single or batch (`{count, callbacks[]}`)
 * ARC callback. Fast and I/O free.
 */
export function parseArcCallback(body: unknown, authorization: string | undefined, token: string): CallbackOutcome {
  const refused = authorizeArcCallback(authorization, token);
  if (refused) return refused;
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
  CallbackRefusal | ({ readonly httpStatus: 200; readonly hints: readonly ArcCallback[] } & ProveReport);

/** Where proven blocks are announced: the tip moves up and a block event is published. */
export interface CallbackEvents {
  /** Command connection and prefix of block events. */
  readonly redis: Redis;
  readonly prefix: string;
}

/**
 * Handles an ARC callback end to end: {@link parseArcCallback}, then every MINED item with block
 * data (its verdict carries the block) goes through the same verify-and-store path as polling
 * ({@link proveMined}); with `events`, each block proven moves the stored tip up when above it and
 * is announced as a block event (confirmation subscriptions wake now, not at the next poll).
 * Idempotent (storing a proof again changes nothing). The other statuses are returned as
 * `hints`: polling stays the ground truth.
 */
export async function handleArcCallback(
  deps: ProofDeps & { readonly token: string; readonly events?: CallbackEvents },
  body: unknown,
  authorization: string | undefined,
): Promise<HandledCallback> {
  const outcome = parseArcCallback(body, authorization, deps.token);
  if (outcome.httpStatus !== 200) return outcome;
  const claims: MinedClaim[] = [];
  const hints: ArcCallback[] = [];
  for (const c of outcome.callbacks) {
    const verdict = isArcStatus(c.txStatus) ? verdictOfStatus(c.txid, { ...c, txStatus: c.txStatus }) : null;
    if (verdict?.kind === 'accepted' && verdict.mined) claims.push({ txId: c.txid, ...verdict.mined });
    else hints.push(c);
  }
  const report = await proveMined(deps, claims);
  if (deps.events) {
    for (const { hash, height } of report.blocks) {
      // A verified block above the stored tip moves the tip up (the next poll sets it from the headers source).
      if (((await deps.store.tip())?.height ?? -1) < height) await deps.store.setTip({ hash, height });
      await publishBlockEvent(deps.events.redis, deps.events.prefix, deps.store, hash).catch(() => null);
    }
  }
  return { httpStatus: 200, hints, ...report };
}

/** The body a handled callback is answered with. */
export interface CallbackAnswer {
  readonly received: true;
  readonly proven: number;
  readonly refused: number;
  readonly hints: number;
}

export interface ArcCallbackReceiver {
  /** The token check alone, before the body is read: null when it passes. */
  authorize(authorization: string | undefined): CallbackRefusal | null;
  /** {@link handleArcCallback} with the receiver's deps: a refusal, or the answer to send. */
  receive(
    body: unknown,
    authorization: string | undefined,
  ): Promise<CallbackRefusal | { readonly httpStatus: 200; readonly answer: CallbackAnswer }>;
}

/** How long a receiver trusts a main-chain header it fetched (see `cachingHeaders`). */
const HEADER_CACHE_MS = 2000;

/**
 * The receiver a callback route adapts: the token (ARC_CALLBACK_TOKEN), the headers source behind
 * a short cache (a block's callbacks arrive in many batches at once: one header fetch serves them
 * all), the proof store, and where block events go.
 */
export function arcCallbackReceiver(
  deps: ProofDeps & { readonly token: string; readonly events: CallbackEvents },
): ArcCallbackReceiver {
  const headers: HeadersSource = cachingHeaders(deps.headers, HEADER_CACHE_MS);
  return {
    authorize: (authorization) => authorizeArcCallback(authorization, deps.token),
    async receive(body, authorization) {
      const outcome = await handleArcCallback({ ...deps, headers }, body, authorization);
      if (outcome.httpStatus !== 200) return outcome;
      return {
        httpStatus: 200,
        answer: {
          received: true,
          proven: outcome.proven.length,
          refused: outcome.failed.length,
          hints: outcome.hints.length,
        },
      };
    },
  };
}

function constantTimeEqual(a: string, b: string): boolean {
  // Hash first so the comparison takes the same time whatever the lengths.
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
