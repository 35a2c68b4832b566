import { z } from 'zod';

/**
 * Payload of a key-creation job on `QUEUES.identityKeys` (jobId = the new key's id). It carries
 * the key's SHA-256 only: the raw key MUST NOT appear in any job payload, Redis value or log.
 */
export const createKeyJob = z.strictObject({
  id: z.uuid(),
  tenant: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  keyHash: z.string().regex(/^[0-9a-f]{64}$/),
  last4: z.string().regex(/^[A-Za-z0-9]{4}$/),
  name: z.string().min(1).max(64),
  permissions: z.array(z.string()).min(1).max(6),
  createdBy: z.string().min(1).max(64),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  /** Redis TIME (ms) after which the job MUST NOT create the key: the API has given up on it. */
  deadlineMs: z.number().int().positive(),
});
export type CreateKeyJob = z.output<typeof createKeyJob>;

/** What the key worker returns for a creation job (expected outcomes, not failures). */
export const createKeyResult = z.object({
  outcome: z.enum(['created', 'limit_exceeded', 'too_late', 'conflict']),
});
export type CreateKeyResult = z.output<typeof createKeyResult>;

export const IDENTITY_JOB_NAMES = { createKey: 'create-key' } as const;
