// The one REST client of the API tests: `send` is the raw call (a fetch Response, for specs that
// read headers, bytes or streams), `call` the same call with the body parsed. The harness, the
// records fixture and the specs all go through it.

/** Where to call: a base URL, or anything that has one (a running API). */
export type Target = string | { readonly baseUrl: string };

export interface SendOptions {
  /** The `x-api-key` header; absent = none. */
  readonly key?: string;
  /** Strings and bytes are sent as they are; anything else as JSON. */
  readonly body?: unknown;
  /**
   * Content-Type of a body: defaults to application/json; null sends the body without one (to
   * test how the API treats a missing type).
   */
  readonly contentType?: string | null;
  readonly headers?: Record<string, string>;
}

/** One HTTP call; the raw Response. */
export function send(target: Target, method: string, path: string, opts: SendOptions = {}): Promise<Response> {
  const url = `${typeof target === 'string' ? target : target.baseUrl}${path}`;
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key !== undefined) headers['x-api-key'] = opts.key;
  let body: string | Uint8Array | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' || opts.body instanceof Uint8Array ? opts.body : JSON.stringify(opts.body);
    if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json';
  }
  return fetch(url, { method, headers, ...(body !== undefined ? { body: body as unknown as string } : {}) });
}

export interface CallResult {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON when the response is JSON, else the text ('' when empty). */
  readonly body: unknown;
}

/** One HTTP call with the response body read: JSON parsed when the response says JSON. */
export async function call(target: Target, method: string, path: string, opts: SendOptions = {}): Promise<CallResult> {
  const res = await send(target, method, path, opts);
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  let parsed: unknown = text;
  if (text.length > 0 && /json/.test(type)) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed };
}
