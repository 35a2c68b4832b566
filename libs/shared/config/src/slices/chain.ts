import { z } from 'zod';
import { httpUrl, intFrom, optionalHttpUrl, optionalIntFrom, optionalNumberFrom, optionalString } from '../parsers';
import { slice, variable } from '../variable';

/** Networks a deployment publishes to (`NETWORK`). */
export const NETWORKS = ['devnet', 'testnet', 'mainnet'] as const;
export type Network = (typeof NETWORKS)[number];

export const NETWORK = variable(
  'NETWORK',
  'Where records are published: devnet, testnet or mainnet.',
  z.enum(NETWORKS, { error: `must be one of ${NETWORKS.join(', ')}` }).default('devnet'),
);

/** The statuses `X-WaitFor` may name: ARC answers once a submission reached one (or X-MaxTimeout passed). */
export const ARC_WAIT_FOR_STATUSES = [
  'RECEIVED',
  'STORED',
  'ANNOUNCED_TO_NETWORK',
  'REQUESTED_BY_NETWORK',
  'SENT_TO_NETWORK',
  'ACCEPTED_BY_NETWORK',
  'SEEN_ON_NETWORK',
] as const;

/** ARC publication: the network, the ARC endpoint and the headers source proofs are checked against. */
export const chain = slice(
  {
    network: NETWORK,
    chain: {
      network: NETWORK,
      arcUrl: variable(
        'ARC_URL',
        'ARC v1 endpoint every record transaction is published to (default: the devnet).',
        httpUrl.default('http://127.0.0.1:9090'),
      ),
      arcApiKey: variable('ARC_API_KEY', 'Sent to ARC as `Authorization: Bearer`.', optionalString),
      arcCallbackUrl: variable(
        'ARC_CALLBACK_URL',
        'Where ARC posts status callbacks; an accelerator only (polling always runs).',
        optionalHttpUrl,
      ),
      arcCallbackToken: variable(
        'ARC_CALLBACK_TOKEN',
        'Bearer token ARC sends with its callbacks (16+ characters).',
        optionalString.refine((v) => v === undefined || v.length >= 16, 'must be at least 16 characters'),
      ),
      arcWaitFor: variable(
        'ARC_WAIT_FOR',
        'X-WaitFor of record submissions: the status ARC waits for before answering. STORED (default) answers once ARC stored the transaction; the change is freed when a poll sees it SEEN_ON_NETWORK.',
        z
          .enum(ARC_WAIT_FOR_STATUSES, { error: `must be one of ${ARC_WAIT_FOR_STATUSES.join(', ')}` })
          .default('STORED'),
      ),
      arcTimeoutMs: variable(
        'ARC_TIMEOUT_MS',
        'Deadline of each ARC and headers request.',
        intFrom(1000, 120_000).default(15_000),
      ),
      arcMaxInFlight: variable(
        'ARC_MAX_IN_FLIGHT',
        'Submission requests (`POST /v1/tx(s)`) each process keeps out to ARC at once; a transaction is never sent before the request carrying its parent was answered.',
        intFrom(1, 64).default(4),
      ),
      headersUrl: variable(
        'HEADERS_URL',
        'WhatsOnChain-compatible block headers source every proof is checked against.',
        httpUrl.default('http://127.0.0.1:9090'),
      ),
      headersApiKey: variable(
        'HEADERS_API_KEY',
        'WhatsOnChain API key, sent bare as `Authorization: <key>` (not Bearer); a secret, never logged.',
        optionalString,
      ),
      headersMaxRps: variable(
        'HEADERS_MAX_RPS',
        'Requests per second each process sends to HEADERS_URL (default 2, WhatsOnChain allows about 3 without a key; no budget on NETWORK=devnet unless set).',
        optionalNumberFrom(0.1, 1000),
      ),
      pollMs: variable(
        'ARC_POLL_MS',
        'Confirmation polling interval (unproven transactions and the reorg check), one run at a time across workers.',
        intFrom(100, 3_600_000).default(2000),
      ),
      callbackGraceMs: variable(
        'ARC_CALLBACK_GRACE_MS',
        'With callbacks configured, how long a published transaction is left to its callback before polling asks for it.',
        intFrom(0, 86_400_000).default(30_000),
      ),
      orphanMaxBlocks: variable(
        'ARC_ORPHAN_MAX_BLOCKS',
        'Blocks a published transaction may stay SEEN_IN_ORPHAN_MEMPOOL before it is escalated (logged with its missing parents, counted, re-sent once after its parents of ours); after as many again it is read as refused (default 6, chain-arc ORPHAN_MAX_BLOCKS).',
        optionalIntFrom(1, 1000),
      ),
    },
  },
  (c) =>
    (c.chain.arcCallbackUrl === undefined) !== (c.chain.arcCallbackToken === undefined)
      ? { env: 'ARC_CALLBACK_TOKEN', message: 'ARC_CALLBACK_URL and ARC_CALLBACK_TOKEN are set together or not at all' }
      : undefined,
);
