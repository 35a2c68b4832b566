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
    },
    options.destination,
  );
}
