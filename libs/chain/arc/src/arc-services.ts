import type { RedisClient } from '@proofline/shared-redis';
import type { Config } from '@proofline/shared-config';
import { ArcClient } from './arc-client';
import { ArcChainPublisher } from './arc-publisher';
import { WocHeadersClient } from './headers-client';
import { ArcProofStore } from './proof-store';

/** Everything the ARC publication path needs, built from the configuration. */
export interface ArcServices {
  readonly client: ArcClient;
  readonly publisher: ArcChainPublisher;
  readonly headers: WocHeadersClient;
  readonly store: ArcProofStore;
}

/**
 * Composition helper for apps: the ARC client (Bearer `ARC_API_KEY`, callback headers when
 * `ARC_CALLBACK_URL`/`ARC_CALLBACK_TOKEN` are set, `X-WaitFor: ARC_WAIT_FOR`, `ARC_TIMEOUT_MS` per request and an
 * `X-MaxTimeout` 2 s below it (none under 3 s), capped at ARC's 30 s, so ARC answers before our deadline), the
 * `ChainPublisher` on it, the headers client on `HEADERS_URL` (`HEADERS_API_KEY`, `HEADERS_MAX_RPS`) and the proof store under `prefix`.
 */
export function createArcServices(chain: Config['chain'], redis: RedisClient, prefix: string): ArcServices {
  const maxTimeoutSeconds =
    chain.arcTimeoutMs >= 3000 ? Math.min(30, Math.floor(chain.arcTimeoutMs / 1000) - 2) : undefined;
  const client = new ArcClient({
    url: chain.arcUrl,
    ...(chain.arcApiKey ? { apiKey: chain.arcApiKey } : {}),
    ...(chain.arcCallbackUrl && chain.arcCallbackToken
      ? { callbackUrl: chain.arcCallbackUrl, callbackToken: chain.arcCallbackToken, callbackBatch: true }
      : {}),
    timeoutMs: chain.arcTimeoutMs,
    waitFor: chain.arcWaitFor,
    ...(maxTimeoutSeconds === undefined ? {} : { maxTimeoutSeconds }),
  });
  return {
    client,
    publisher: new ArcChainPublisher(client),
    headers: new WocHeadersClient({
      url: chain.headersUrl,
      timeoutMs: chain.arcTimeoutMs,
      ...(chain.headersApiKey ? { apiKey: chain.headersApiKey } : {}),
      // The devnet node has no request limit; any other source gets the client's default budget.
      ...(chain.headersMaxRps !== undefined
        ? { maxRps: chain.headersMaxRps }
        : chain.network === 'devnet'
          ? { maxRps: Infinity }
          : {}),
    }),
    store: new ArcProofStore(redis, prefix),
  };
}
