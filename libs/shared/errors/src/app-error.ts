/**
 * The one error kind the service throws for anything that is not an expected outcome.
 * `detail` is public (it goes into the problem+json body); `internalDetail` and `cause` are
 * for logs only. HTTP and GraphQL layers map it; a 500 never leaks an internal message.
 */
export interface AppErrorOptions {
  errorCode: string;
  httpStatus: number;
  detail: string;
  title?: string;
  internalDetail?: string;
  cause?: unknown;
  retryable?: boolean;
  /** Extra response headers (e.g. Retry-After on 503). */
  headers?: Record<string, string>;
}

export class AppError extends Error {
  override readonly name = 'AppError';
  readonly errorCode: string;
  readonly httpStatus: number;
  readonly detail: string;
  readonly title: string;
  readonly internalDetail: string | undefined;
  readonly retryable: boolean;
  readonly headers: Readonly<Record<string, string>>;

  constructor(options: AppErrorOptions) {
    super(options.detail, { cause: options.cause });
    this.errorCode = options.errorCode;
    this.httpStatus = options.httpStatus;
    this.detail = options.detail;
    this.title = options.title ?? STATUS_TITLES[options.httpStatus] ?? 'Error';
    this.internalDetail = options.internalDetail;
    this.retryable = options.retryable ?? false;
    this.headers = options.headers ?? {};
  }
}

export const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** RFC 7807 problem body. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errorCode: string;
  instance?: string;
}

/** Maps any thrown value to a problem body; unknown errors become an opaque 500. */
export function toProblem(error: unknown, instance?: string): Problem {
  if (error instanceof AppError) {
    return {
      type: `https://proofline.dev/problems/${error.errorCode}`,
      title: error.title,
      status: error.httpStatus,
      detail: error.detail,
      errorCode: error.errorCode,
      ...(instance ? { instance } : {}),
    };
  }
  return {
    type: 'https://proofline.dev/problems/INTERNAL_ERROR',
    title: 'Internal Server Error',
    status: 500,
    detail: 'An unexpected error occurred. It has been logged.',
    errorCode: 'INTERNAL_ERROR',
    ...(instance ? { instance } : {}),
  };
}

/** Shorthands for the common 4xx cases. */
export const badRequest = (errorCode: string, detail: string) => new AppError({ errorCode, httpStatus: 400, detail });
export const unauthorized = (errorCode: string, detail: string) => new AppError({ errorCode, httpStatus: 401, detail });
export const forbidden = (errorCode: string, detail: string) => new AppError({ errorCode, httpStatus: 403, detail });
export const notFound = (errorCode: string, detail: string) => new AppError({ errorCode, httpStatus: 404, detail });
export const conflict = (errorCode: string, detail: string) => new AppError({ errorCode, httpStatus: 409, detail });
export const unavailable = (errorCode: string, detail: string, retryAfterSeconds = 1, cause?: unknown) =>
  new AppError({
    errorCode,
    httpStatus: 503,
    detail,
    retryable: true,
    cause,
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
