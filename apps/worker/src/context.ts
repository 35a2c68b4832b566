import type { Clock, ResolvedConfig } from '@proofline/shared-config';
import type { Logger } from '@proofline/shared-logger';
import type { ArcChain } from '@proofline/chain-arc';
import type { FundingWallet } from '@proofline/chain-wallet';
import type { Publication } from '@proofline/records-publication';
import type { RedisClient } from '@proofline/shared-redis';

/** What every worker role is started with. */
export interface WorkerContext {
  readonly config: ResolvedConfig;
  readonly logger: Logger;
  /** Shared command connection (not for blocking BullMQ calls). */
  readonly redis: RedisClient;
  /**
   * Shared BullMQ connection of every role's workers and queues (`maxRetriesPerRequest: null`);
   * BullMQ duplicates it for each worker's blocking reads and closes those copies itself.
   */
  readonly bull: RedisClient;
  /** The chain scope (ARC over HTTP, proofs in Redis) on the command connection. */
  readonly chain: ArcChain;
  /** The funding wallet (its UTXO pool) on the command connection. */
  readonly wallet: FundingWallet;
  /** The publication wing (createPublication): the records role starts its publisher, the chain role its confirmations. */
  readonly publication: Publication;
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
