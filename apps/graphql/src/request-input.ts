import { createGraphQLError } from 'graphql-yoga';
import type { GraphQLParams, Plugin } from 'graphql-yoga';

/** A GraphQL-over-HTTP request error: `extensions.code`, and the HTTP status yoga answers with. */
function requestError(message: string, code: string, status: number): Error {
  return createGraphQLError(message, { extensions: { code, status, http: { status } } });
}

function jsonParam(params: URLSearchParams, name: 'variables' | 'extensions'): Record<string, unknown> | undefined {
  const raw = params.get(name);
  if (raw === null || raw === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw requestError(`The "${name}" parameter is not valid JSON.`, 'BAD_REQUEST', 400);
  }
  if (value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw requestError(`The "${name}" parameter must be a JSON object.`, 'BAD_REQUEST', 400);
  }
  return value as Record<string, unknown>;
}

/**
 * GraphQL parameters from a query string (GET, or an urlencoded POST body). yoga's own parser
 * runs `JSON.parse` unguarded, so malformed `variables` or `extensions` became an internal error.
 */
export function paramsFromSearch(search: string): GraphQLParams {
  const params = new URLSearchParams(search);
  const variables = jsonParam(params, 'variables');
  const extensions = jsonParam(params, 'extensions');
  return {
    query: params.get('query') || undefined,
    operationName: params.get('operationName') || undefined,
    ...(variables ? { variables } : {}),
    ...(extensions ? { extensions } : {}),
  };
}

/** The status yoga answers without a body, and the code such an answer gets. */
const BODYLESS: Readonly<Record<number, { code: string; message: string }>> = {
  406: {
    code: 'NOT_ACCEPTABLE',
    message: 'Accept application/graphql-response+json, application/json or text/event-stream.',
  },
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the request as application/json (or use GET).' },
};

/**
 * Bad input at the HTTP level never reaches yoga's internals as an exception:
 * - GET and urlencoded POST parameters are parsed here, malformed JSON is a 400 BAD_REQUEST;
 * - the 406/415 answers yoga sends without a body get a GraphQL error body with a code.
 */
export function requestInputPlugin(): Plugin {
  return {
    onRequestParse({ request, setRequestParser }) {
      const contentType = request.headers.get('content-type')?.split(',')[0]?.split(';')[0]?.trim().toLowerCase();
      if (request.method === 'GET') {
        setRequestParser((req) => paramsFromSearch(req.url.slice(req.url.indexOf('?') + 1 || req.url.length)));
      } else if (request.method === 'POST' && contentType === 'application/x-www-form-urlencoded') {
        setRequestParser(async (req) => paramsFromSearch(await req.text()));
      }
    },
    onResponse({ response, setResponse }) {
      const bodyless = BODYLESS[response.status];
      if (!bodyless || response.headers.get('content-type')) return;
      const headers = new Headers(response.headers);
      headers.set('content-type', 'application/json; charset=utf-8');
      const body = JSON.stringify({
        errors: [{ message: bodyless.message, extensions: { code: bodyless.code, status: response.status } }],
      });
      setResponse(new Response(body, { status: response.status, headers }));
    },
  };
}
