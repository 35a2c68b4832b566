import type { RedisClient } from '@proofline/shared-redis';
import type { RequestProblemVerdict } from '@proofline/chain-domain';
import type { Clock } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import { recordsKeys } from '@proofline/records-data-access';

/*
 * A problem answer that names no transaction of ours (ARC's 400 for a bad `X-CallbackUrl`, an
 * unknown `X-WaitFor`, an unparsable body) is about the request, the same for every record: the
 * deployment's configuration or the chain service is wrong, not the record. Publication pauses:
 * the record stays in the outbox with its inputs reserved, its job is retried with back-off
 * (then the outbox sweeper re-enqueues it), and the pause is shared through Redis so that every
 * process reports it (the worker's metric, the API's readiness) and it is logged once.
 */

/** What a pause records: when it began and the problem that began it. */
export interface PauseState {
  readonly since: string;
  readonly httpStatus: number;
  readonly detail: string;
}

/**
 * How long a pause is reported without a new problem answer. Every problem answer renews it and
 * the next answer that is not a request problem ends it, so this only bounds a stale report left
 * by a process that stopped while paused.
 */
export const PAUSE_TTL_MS = 5 * 60_000;

/** A transient fault of one publication: the chain refused the request, not the transaction. */
export class RequestProblemError extends Error {
  override readonly name = 'RequestProblemError';
}

export interface PublicationPause {
  /** The chain answered a request problem: pause (logged once per pause across processes). */
  paused(v: RequestProblemVerdict): Promise<void>;
  /** The chain answered about a transaction: end the pause if this process saw one. */
  resumed(): Promise<void>;
}

/** The pause on Redis (`records:publication-paused`). */
export function publicationPause(o: {
  redis: RedisClient;
  prefix: string;
  clock: Clock;
  logger?: Logger;
}): PublicationPause {
  const key = recordsKeys(o.prefix).publicationPaused;
  // Only a process that saw a pause ends one: the common path (no pause) costs no round trip.
  let seen = false;
  return {
    async paused(v) {
      seen = true;
      const state: PauseState = { since: o.clock.now().toISOString(), httpStatus: v.httpStatus, detail: v.detail };
      const first = await o.redis.set(key, JSON.stringify(state), 'PX', PAUSE_TTL_MS, 'NX');
      if (first === 'OK') {
        o.logger?.warn(
          { httpStatus: v.httpStatus, detail: v.detail },
          'publication paused: the chain service refused the request itself (check ARC_URL, ARC_CALLBACK_URL, ARC_WAIT_FOR); records stay in the outbox and are retried',
        );
      } else {
        await o.redis.pexpire(key, PAUSE_TTL_MS);
      }
    },
    async resumed() {
      if (!seen) return;
      seen = false;
      if ((await o.redis.del(key)) === 1) o.logger?.warn({}, 'publication resumed: the chain service answers again');
    },
  };
}

/** The current pause, or null when publication runs (readiness, metrics). */
export async function readPublicationPause(redis: RedisClient, prefix: string): Promise<PauseState | null> {
  const raw = await redis.get(recordsKeys(prefix).publicationPaused);
  if (!raw) return null;
  try {
    return JSON.parse(raw) as PauseState;
  } catch {
    return null;
  }
}
