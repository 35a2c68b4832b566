import type { z } from 'zod';
import { AppError } from '@proofline/shared-errors';

/**
 * Parses `value` with a zod schema; on failure throws a 400 AppError whose detail names the
 * field and the problem (e.g. `name: must be 3 to 32 characters`).
 */
export function parseOr400<S extends z.ZodType>(
  schema: S,
  value: unknown,
  errorCode = 'VALIDATION_FAILED',
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const detail = result.error.issues
    .slice(0, 5)
    .map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ');
  throw new AppError({ errorCode, httpStatus: 400, detail });
}
