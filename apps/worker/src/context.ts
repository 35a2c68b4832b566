import type { Clock, Config } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import type { Redis } from '@proofline/shared-redis';

/** What every worker role is started with. */
export interface WorkerContext {
  readonly config: Config;
  readonly logger: Logger;
  /** Shared command connection (not for blocking BullMQ calls). */
  readonly redis: Redis;
  readonly clock: Clock;
  readonly instanceId: string;
}

/** A running worker role (a BullMQ Worker or a group of them). */
export interface RunningRole {
  readonly name: string;
  /** Stops taking jobs and waits for the jobs in hand to finish. */
  close(): Promise<void>;
}

export type RoleStarter = (ctx: WorkerContext) => Promise<RunningRole>;
