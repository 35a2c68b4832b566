import { AsyncLocalStorage } from 'node:async_hooks';
import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino censors wherever they appear in a log object. Raw keys, tokens and record bodies
 * MUST never reach a log line; callers also never log them on purpose.
 */
export const REDACT_PATHS = [
  'rawKey',
  '*.rawKey',
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'body',
  '*.body',
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
];

/**
 * The request (or job) a piece of work belongs to. Every line logged while it runs carries its
 * `reqId`, also from services that only hold the process logger.
 */
export const logScope = new AsyncLocalStorage<{ reqId: string }>();

export interface LoggerOptions {
  level: string;
  name: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to assert on lines. */
  destination?: pino.DestinationStream;
}

/** JSON logger: one object per line, ISO time, secrets redacted. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      name: options.name,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const scope = logScope.getStore();
        return scope ? { reqId: scope.reqId } : {};
      },
    },
    options.destination,
  );
}
