import { ARC_STATUSES } from '@proofline/chain-domain';
import type { ArcStatus } from '@proofline/chain-domain';

/**
 * How strictly the node holds clients to what ARC's own code does (bitcoin-sv/arc at e7efc5b;
 * each field names the code it models). The node reads these objects on every use, so a test
 * may change a field of `node.strictness` between requests.
 */
export interface ArcStrictness {
  /**
   * A raw (non-EF) transaction's parents must be in the node's store before the request: ARC
   * extends a raw transaction from its store, a node or WhatsOnChain
   * (`internal/validator/defaultvalidator/helpers.go` `extendTx`), and validates every
   * transaction of a request before it submits any (`internal/api/handler/default.go`
   * `getTxDataFromHex`, then `submitTransactions`), so a parent in the same request is not found:
   * 460. An EF transaction carries its spent outputs and is validated with them (no lookup).
   */
  readonly rawParentsMustBeStored: boolean;
  /**
   * ARC's `api.standardFormatSupported` (`default_validator.go` `ValidateTransaction`): false
   * answers 460 to every raw transaction the node does not know yet.
   */
  readonly standardFormatSupported: boolean;
  /**
   * An EF transaction whose parent the node does not know is validated with the outputs its EF
   * carries (as ARC's validator does: `needsExtension` is false for an extended transaction) and
   * held as SEEN_IN_ORPHAN_MEMPOOL (the network's "missing inputs", `doc/README.md`) until the
   * parent is accepted: then it is accepted (SEEN_ON_NETWORK) or, refused then, REJECTED. Off: 462.
   */
  readonly efOrphans: boolean;
  /**
   * Bytes that are not a transaction (bad hex, truncated, trailing bytes) fail the whole request
   * with 400 and no txid, as ARC's `getTxIDs` / `getTxDataFromHex` do; off: 463 for that entry.
   */
  readonly malformedIsBadRequest: boolean;
  /**
   * An `X-CallbackUrl` containing any of these is refused with 400 (ARC's
   * `api.rejectCallbackContaining`, `ValidateCallbackURL`; its example config lists
   * `http://localhost` and `https://localhost`).
   */
  readonly rejectCallbackContaining: readonly string[];
  /**
   * DOUBLE_SPEND_ATTEMPTED is reported by callback only to registrations with
   * `X-FullStatusUpdates: true` (ARC: without it only REJECTED and above); off: to every one.
   */
  readonly doubleSpendCallbackNeedsFullStatusUpdates: boolean;
  /** Callbacks per batched POST (`internal/callbacker/processor.go` `batchSizeDefault` 500). */
  readonly callbackBatchMax: number;
  /**
   * A network error (refused, reset, timeout) is retried. ARC's sender tags every `net.Error`
   * `ErrHostNonExistent` and does not retry it (`internal/callbacker/sender.go`); a non-2xx
   * answer it retries up to `maxRetries`.
   */
  readonly callbackRetryOnNetworkError: boolean;
  /** Attempts per callback delivery on non-2xx answers (ARC's `maxRetriesDefault` 10). */
  readonly callbackMaxAttempts: number;
}

/**
 * A node that accepts what ARC would refuse (raw children of parents in the same request,
 * unreadable entries as 463) and sends callbacks more generously: the default until the service
 * sends Extended Format and reads ARC's answers as ARC means them.
 */
export const LENIENT_ARC: ArcStrictness = Object.freeze({
  rawParentsMustBeStored: false,
  standardFormatSupported: true,
  efOrphans: false,
  malformedIsBadRequest: false,
  rejectCallbackContaining: [],
  doubleSpendCallbackNeedsFullStatusUpdates: false,
  callbackBatchMax: 50,
  callbackRetryOnNetworkError: true,
  callbackMaxAttempts: 5,
});

/**
 * ARC's behaviour as its code has it. `standardFormatSupported` stays true (ARC's default; an
 * operator may turn it off) and no callback URL is refused (our own deployments call back to
 * localhost; ARC's example config refuses that).
 */
export const STRICT_ARC: ArcStrictness = Object.freeze({
  rawParentsMustBeStored: true,
  standardFormatSupported: true,
  efOrphans: true,
  malformedIsBadRequest: true,
  rejectCallbackContaining: [],
  doubleSpendCallbackNeedsFullStatusUpdates: true,
  callbackBatchMax: 500,
  callbackRetryOnNetworkError: false,
  callbackMaxAttempts: 10,
});

/** ARC's example configuration's refused callback substrings (`config/example_config.yaml`). */
export const ARC_EXAMPLE_REJECTED_CALLBACKS: readonly string[] = Object.freeze([
  'http://localhost',
  'https://localhost',
]);

/** Statuses ARC may answer before SEEN_ON_NETWORK when its wait times out (RECEIVED … ACCEPTED_BY_NETWORK). */
export type StatusBeforeSeen = Exclude<
  ArcStatus,
  | 'UNKNOWN'
  | 'QUEUED'
  | 'SEEN_IN_ORPHAN_MEMPOOL'
  | 'SEEN_ON_NETWORK'
  | 'DOUBLE_SPEND_ATTEMPTED'
  | 'REJECTED'
  | 'MINED_IN_STALE_BLOCK'
  | 'MINED'
>;
export const STATUSES_BEFORE_SEEN = (Object.keys(ARC_STATUSES) as ArcStatus[]).filter(
  (s) => ARC_STATUSES[s] >= ARC_STATUSES.RECEIVED && ARC_STATUSES[s] < ARC_STATUSES.SEEN_IN_ORPHAN_MEMPOOL,
) as readonly StatusBeforeSeen[];

/** True when `status` names one of {@link STATUSES_BEFORE_SEEN}. */
export const isStatusBeforeSeen = (status: string): status is StatusBeforeSeen =>
  (STATUSES_BEFORE_SEEN as readonly string[]).includes(status);

/**
 * ARC's timing and double-spend realities: things a real ARC does that a fast devnet would not,
 * each off by default (tests and benchmarks turn them on).
 */
export interface ArcRealities {
  /**
   * An accepted transaction reports `statusBeforeSeen` for this long, then SEEN_ON_NETWORK: an
   * `X-WaitFor` that times out first answers 200 with the lower status (ARC's
   * `metamorph/server.go`), and a full-status callback registration gets SEEN_ON_NETWORK when it
   * is reached. 0: SEEN_ON_NETWORK at once.
   */
  readonly timeToSeenMs: number;
  readonly statusBeforeSeen: StatusBeforeSeen;
  /** `/v1/tx` and `/v1/txs` answer no earlier than this many ms after the request arrived (the transactions are accepted at once). */
  readonly submitDelayMs: number;
  /**
   * A double spend marks both sides DOUBLE_SPEND_ATTEMPTED, as ARC does: the first spender too
   * (until it is mined: then MINED, the other REJECTED). Off: the first spender keeps
   * SEEN_ON_NETWORK.
   */
  readonly doubleSpendMarksBoth: boolean;
}

export const NO_REALITIES: ArcRealities = Object.freeze({
  timeToSeenMs: 0,
  statusBeforeSeen: 'ACCEPTED_BY_NETWORK',
  submitDelayMs: 0,
  doubleSpendMarksBoth: false,
});

/**
 * Every reality on, at values a spec can wait out: the setting the service's specs are meant to
 * run the node with (see the README's "Strictness and realities"). `X-WaitFor` with ARC's default
 * 5 s `X-MaxTimeout` then answers SEEN_ON_NETWORK after the time to SEEN; a client that waits
 * less (`X-WaitFor: STORED`, `X-MaxTimeout: 1`) gets ACCEPTED_BY_NETWORK.
 */
export const TEST_REALITIES: ArcRealities = Object.freeze({
  timeToSeenMs: 1500,
  statusBeforeSeen: 'ACCEPTED_BY_NETWORK',
  submitDelayMs: 50,
  doubleSpendMarksBoth: true,
});

/** Mutable copies for a node (`node.strictness`, `node.realities`). */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
