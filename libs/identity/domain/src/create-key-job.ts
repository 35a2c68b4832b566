import { z } from 'zod';
import { TENANT_PATTERN } from './ids';
import { PERMISSIONS } from './api-key';

/**
 * The identity scope's job contract on `QUEUES.identityKeys` (queue name and prefix stay in
 * `@proofline/shared-jobs`). The API enqueues, the key worker runs it; jobId = the new key's id.
 * It carries the key's SHA-256 only: the raw key MUST NOT appear in any job payload, Redis value
 * or log.
 */
export const CREATE_KEY_JOB_NAME = 'create-key';

export const createKeyJob = z.strictObject({
  id: z.uuid(),
  tenant: z.string().regex(TENANT_PATTERN),
  keyHash: z.string().regex(/^[0-9a-f]{64}$/),
  last4: z.string().regex(/^[A-Za-z0-9]{4}$/),
  name: z.string().min(1).max(64),
  permissions: z.array(z.enum(PERMISSIONS)).min(1).max(6),
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

/**
 * Options of every creation job (jobId is set per job). Retries are safe: the worker's create
 * script is idempotent by key id and refuses a job past its deadline.
 */
export const CREATE_KEY_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 100 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 24 * 3600 },
} as const;
