import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { AppError, badRequest } from '@proofline/shared-errors';
import { isForbiddenAddress } from '@proofline/webhooks-domain';

export type Resolver = (host: string) => Promise<readonly string[]>;

/** Every address `host` resolves to (A and AAAA). */
export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses.map((a) => a.address)),
    );
  });

const notAllowed = (detail: string) => new AppError({ errorCode: 'WEBHOOK_URL_NOT_ALLOWED', httpStatus: 400, detail });

/**
 * Validates a webhook URL for storage: http or https only, no credentials, and every address the
 * host resolves to must be public unless `allowPrivate` (WEBHOOK_ALLOW_PRIVATE).
 * @throws AppError 400 WEBHOOK_URL_INVALID (not a URL, credentials, host does not resolve) or
 *   WEBHOOK_URL_NOT_ALLOWED (another scheme; loopback, private, link-local, metadata addresses).
 */
export async function checkWebhookUrl(raw: string, opts: { allowPrivate: boolean; resolve?: Resolver }): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('WEBHOOK_URL_INVALID', 'url must be an absolute http(s) URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw notAllowed(`url: only http and https are allowed, not ${url.protocol.replace(/:$/, '')}.`);
  if (url.username !== '' || url.password !== '')
    throw badRequest('WEBHOOK_URL_INVALID', 'url must not carry credentials; every delivery is signed instead.');
  if (url.hostname === '') throw badRequest('WEBHOOK_URL_INVALID', 'url needs a host.');
  if (opts.allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: readonly string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = await (opts.resolve ?? systemResolver)(host);
    } catch {
      throw badRequest('WEBHOOK_URL_INVALID', `url: the host ${host} does not resolve.`);
    }
  }
  if (addresses.length === 0 || addresses.some(isForbiddenAddress)) {
    throw notAllowed(
      'url resolves to a loopback, private, link-local or otherwise reserved address; webhooks are delivered to public addresses only.',
    );
  }
  return url;
}

/** An address refused at connection time (DNS rebinding after the URL was stored). */
export class ForbiddenAddressError extends Error {
  override readonly name = 'ForbiddenAddressError';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.request` that refuses forbidden addresses at connect time: the address
 * checked is the address connected to, so a host that resolved to a public address when the
 * webhook was created and to 127.0.0.1 now is refused.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      const list = addresses;
      if (!allowPrivate && (list.length === 0 || list.some((a) => isForbiddenAddress(a.address)))) {
        callback(
          new ForbiddenAddressError(`${hostname} resolves to a forbidden address`) as NodeJS.ErrnoException,
          '',
          0,
        );
        return;
      }
      if (options.all) callback(null, list);
      else {
        const first = list[0] as LookupAddress;
        callback(null, first.address, first.family);
      }
    });
  };
}
