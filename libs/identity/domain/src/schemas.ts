import { z } from 'zod';
import { ISSUER_PERMISSIONS, LEGACY_KEY_PATTERN, PERMISSIONS, VERIFIER_PERMISSIONS } from './api-key';

const oneOf = (allowed: readonly string[]) => `must be one of ${allowed.join(', ')} (case-sensitive)`;

/**
 * Key names are trimmed, then must be 3 to 32 characters without control characters. Trimming
 * is deliberate: a name is a label people read, and "  ab " is not a 3-character name.
 */
export const keyName = z
  .string({ error: 'must be a string' })
  .trim()
  .min(3, 'must be 3 to 32 characters')
  .max(32, 'must be 3 to 32 characters')
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters');

const objectBody = (what: string, allowed: readonly string[]) => ({
  error: (i: { code?: string; input?: unknown; keys?: string[] }) => {
    if (i.code === 'unrecognized_keys') {
      const keys = (i.keys ?? []).map((k) => JSON.stringify(k)).join(', ');
      return `unknown field ${keys} (allowed fields: ${allowed.join(', ')})`;
    }
    return i.input === undefined
      ? `${what}: a JSON object body is required`
      : `${what}: the body must be a JSON object`;
  },
});

/** Unknown fields are rejected, so a typo like `issuerPermissions` is reported, not ignored. */
export const createKeyBody = z
  .strictObject(
    {
      name: keyName,
      issuerPermission: z.enum(ISSUER_PERMISSIONS, { error: oneOf(ISSUER_PERMISSIONS) }).nullish(),
      verifierPermission: z.enum(VERIFIER_PERMISSIONS, { error: oneOf(VERIFIER_PERMISSIONS) }).nullish(),
    },
    objectBody('create key', ['name', 'issuerPermission', 'verifierPermission']),
  )
  .refine((b) => Boolean(b.issuerPermission ?? b.verifierPermission), {
    message: 'at least one of issuerPermission and verifierPermission is required',
  });

export const revokeKeyBody = z.strictObject(
  { isRevoked: z.boolean({ error: 'isRevoked is required and must be a boolean (true or false)' }) },
  objectBody('revoke', ['isRevoked']),
);

export const legacyCreateBody = z.strictObject({ name: keyName }, objectBody('legacy create', ['name']));

export const legacyPatchBody = z.strictObject(
  { status: z.enum(['Active', 'Disabled'], { error: 'status is required and must be Active or Disabled' }) },
  objectBody('legacy update', ['status']),
);

const isoDate = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });

/** One item of a legacy import file (`npm run cli -- legacy import FILE.json`). */
export const legacyImportItem = z
  .strictObject({
    id: z.union([z.number().int().positive().max(Number.MAX_SAFE_INTEGER), z.string().regex(/^[1-9][0-9]{0,15}$/)], {
      error: 'must be a positive integer',
    }),
    name: keyName,
    status: z.enum(['Active', 'Disabled'], { error: 'must be Active or Disabled' }),
    createdAt: isoDate,
    expiresAt: isoDate.optional(),
    permissions: z.array(z.enum(PERMISSIONS, { error: oneOf(PERMISSIONS) })).optional(),
    rawKey: z.string().regex(LEGACY_KEY_PATTERN, 'must be 16 to 128 characters of letters, digits and ._-').optional(),
    keyHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'must be a lowercase SHA-256 hex digest')
      .optional(),
  })
  .refine((i) => (i.rawKey === undefined) !== (i.keyHash === undefined), {
    message: 'exactly one of rawKey and keyHash is required',
  });
export const legacyImportFile = z.array(legacyImportItem, { error: 'the import file must be a JSON array of keys' });
