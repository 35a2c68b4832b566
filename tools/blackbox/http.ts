/**
 * The black-box check's HTTP client and assertions: plain `fetch`, nothing of the service's code.
 */
import { isDeepStrictEqual } from 'node:util';

export interface Answer {
  status: number;
  headers: Headers;
  /** The body's bytes (empty for HEAD). */
  bytes: Buffer;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface CallOptions {
  /** `x-api-key`; none when undefined. */
  key?: string | undefined;
  /** A JSON body (sent as application/json) or raw bytes (sent as application/octet-stream). */
  body?: unknown;
  /** Overrides the content type the body would get. */
  contentType?: string;
  headers?: Record<string, string>;
}

/** A check failed: the message says what was expected and what came. */
export class CheckFailed extends Error {}

/** A check could not run (an option it needs is missing, or a check it builds on failed). */
export class CheckSkipped extends Error {}

/** Answers a client is told to send again later. */
const RETRYABLE_CODES = new Set([
  'FUNDING_EXHAUSTED',
  'FUNDING_LEASE_EXPIRED',
  'PUBLICATION_BACKLOG_FULL',
  'KEY_SERVICE_UNAVAILABLE',
  'STORE_UNAVAILABLE',
  'REDIS_UNAVAILABLE',
  'RATE_LIMITED',
]);

/** Waits between tries of a retried answer: its Retry-After, but never longer than this. */
const MAX_RETRY_WAIT_MS = 1000;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * HTTP against one deployment. A 429 or 503 whose `errorCode` says "try again" (with Retry-After)
 * is sent again until `waitMs` after the call began, as a well-behaved client would; `retries`
 * counts them per errorCode.
 */
export class Http {
  readonly retries: Record<string, number> = {};

  constructor(private readonly waitMs: number) {}

  async call(method: string, url: string, options: CallOptions = {}): Promise<Answer> {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const answer = await this.once(method, url, options);
      const code = errorCodeOf(answer);
      const retryAfter = answer.headers.get('retry-after');
      if (
        (answer.status === 503 || answer.status === 429) &&
        code !== undefined &&
        RETRYABLE_CODES.has(code) &&
        retryAfter !== null &&
        Date.now() < deadline
      ) {
        this.retries[code] = (this.retries[code] ?? 0) + 1;
        const seconds = Number(retryAfter);
        await sleep(Math.min(Number.isFinite(seconds) ? seconds * 1000 : MAX_RETRY_WAIT_MS, MAX_RETRY_WAIT_MS));
        continue;
      }
      return answer;
    }
  }

  private async once(method: string, url: string, options: CallOptions): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers['x-api-key'] = options.key;
    let body: Uint8Array<ArrayBuffer> | string | undefined;
    if (options.body instanceof Uint8Array) {
      body = new Uint8Array(options.body);
      headers['content-type'] = options.contentType ?? 'application/octet-stream';
    } else if (typeof options.body === 'string' && options.contentType !== undefined) {
      body = options.body;
      headers['content-type'] = options.contentType;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? 'application/json';
    }
    const res = await fetch(url, { method, headers, body, redirect: 'manual' });
    const bytes = Buffer.from(await res.arrayBuffer());
    let json: unknown;
    if (bytes.length > 0 && /json/.test(res.headers.get('content-type') ?? '')) {
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch {
        json = undefined;
      }
    }
    return { status: res.status, headers: res.headers, bytes, json };
  }
}

export function errorCodeOf(answer: Answer): string | undefined {
  const code = (answer.json as { errorCode?: unknown } | undefined)?.errorCode;
  return typeof code === 'string' ? code : undefined;
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

/** Fails the check with `what` unless `condition` holds. */
export function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new CheckFailed(what);
}

/** Fails unless `actual` deeply equals `expected`. */
export function same(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepStrictEqual(actual, expected))
    throw new CheckFailed(`${what}: expected ${show(expected)}, got ${show(actual)}`);
}

/** Fails unless the answer has `status`; returns its JSON body. */
export function expectStatus<T = Record<string, unknown>>(answer: Answer, status: number, what: string): T {
  if (answer.status !== status)
    throw new CheckFailed(
      `${what}: expected HTTP ${status}, got ${answer.status} ${show(answer.json ?? answer.bytes.toString('utf8'))}`,
    );
  return answer.json as T;
}

/**
 * Fails unless the answer is an RFC 7807 problem (`application/problem+json` with type, title,
 * status equal to the HTTP status, detail) with this status and errorCode; returns its detail.
 */
export function expectProblem(answer: Answer, status: number, errorCode: string, what: string): string {
  const body = expectStatus<Record<string, unknown>>(answer, status, what);
  const type = answer.headers.get('content-type') ?? '';
  check(type.startsWith('application/problem+json'), `${what}: content type ${type}, not application/problem+json`);
  same(body?.['errorCode'], errorCode, `${what}: errorCode`);
  same(body?.['status'], status, `${what}: the problem's status`);
  check(typeof body['type'] === 'string' && typeof body['title'] === 'string', `${what}: type and title missing`);
  check(typeof body['detail'] === 'string', `${what}: detail missing`);
  return body['detail'];
}

/** Polls `probe` until it returns something other than undefined, or fails after `ms`. */
export async function until<T>(
  probe: () => Promise<T | undefined>,
  ms: number,
  what: string | (() => string),
): Promise<T> {
  const deadline = Date.now() + ms;
  let delay = 50;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new CheckFailed(`${typeof what === 'string' ? what : what()} (waited ${ms} ms)`);
    await sleep(delay);
    delay = Math.min(delay * 2, 500);
  }
}
