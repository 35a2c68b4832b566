import { z } from 'zod';
import type { PublicationState, RecordMeta } from '@proofline/records-domain';
import type { Confirmation } from '@proofline/records-feature';
import { notFound } from '@proofline/shared-errors';
import type { GraphQLContext } from '../context';
import type { GraphQLDeps } from '../deps';
import { argumentError } from '../errors';
import type { Builder, SchemaLimits } from './builder';
import { txIdSchema } from './common';
import type { addRecordTypes } from './records';

export interface ConfirmationUpdate {
  readonly txId: string;
  readonly publication: PublicationState;
  readonly confirmedBlocks: number;
  readonly depth: number;
  readonly reached: boolean;
  readonly confirmation: Confirmation | null;
}

/** Resolves after `ms`, or at once when `signal` is aborted; never leaves a timer behind. */
function pause(ms: number, until: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const slept = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([until.then(() => true), slept]).finally(() => clearTimeout(timer));
}

/**
 * Status updates of one record until it has `depth` confirmations (or its publication failed).
 * State-based: on every block event (any instance's producer, via Redis pub/sub) and at least
 * every `pollMs`, it re-reads the status through the records use case, so a missed event only
 * delays an update. Emits the first status at once, then only changes.
 */
export async function* watchConfirmation(
  deps: GraphQLDeps,
  meta: RecordMeta,
  depth: number,
  pollMs: number,
): AsyncGenerator<ConfirmationUpdate> {
  const events = deps.chain.blockEvents();
  let wake = events.next(); // starts listening before the first read: no block falls in between
  let last = '';
  try {
    for (;;) {
      const status = await deps.records.status(meta.family, meta.txId);
      const confirmedBlocks = status.confirmation?.confirmedBlocks ?? 0;
      const reached = confirmedBlocks >= depth;
      const key = `${status.publication}|${confirmedBlocks}`;
      if (key !== last) {
        last = key;
        yield {
          txId: meta.txId,
          publication: status.publication,
          confirmedBlocks,
          depth,
          reached,
          confirmation: status.confirmation,
        };
      }
      if (reached || status.publication === 'failed') return;
      if (await pause(pollMs, wake)) wake = events.next();
    }
  } finally {
    await events.return?.();
  }
}

export function addConfirmationSubscription(
  builder: Builder,
  limits: SchemaLimits,
  records: ReturnType<typeof addRecordTypes>,
) {
  const Update = builder.objectRef<ConfirmationUpdate>('ConfirmationUpdate').implement({
    description: 'Where a record stands on its way to `depth` confirmations.',
    fields: (t) => ({
      txId: t.exposeString('txId'),
      publication: t.field({ type: records.Publication, resolve: (u) => u.publication }),
      confirmedBlocks: t.exposeInt('confirmedBlocks', { description: '0 until mined.' }),
      depth: t.exposeInt('depth'),
      reached: t.exposeBoolean('reached', { description: 'true on the last update: the requested depth is reached.' }),
      confirmation: t.field({ type: records.ConfirmationRef, nullable: true, resolve: (u) => u.confirmation }),
    }),
  });

  const argsSchema = z.object({
    txId: txIdSchema,
    depth: z
      .number()
      .int()
      .min(1, `must be between 1 and ${limits.maxDepth}.`)
      .max(limits.maxDepth, `must be between 1 and ${limits.maxDepth}.`),
  });

  builder.subscriptionType({
    fields: (t) => ({
      confirmation: t.field({
        type: Update,
        description:
          `Pushes the confirmation status of a record (linked or independent) as blocks arrive, until \`depth\` confirmations (1..${limits.maxDepth}, default 1) ` +
          'or a failed publication; then the stream ends. Any valid key. Over SSE: POST/GET /graphql with accept: text/event-stream.',
        args: { txId: t.arg.string({ required: true }), depth: t.arg.int({ defaultValue: 1 }) },
        subscribe: async (_root, args, ctx: GraphQLContext) => {
          const parsed = argsSchema.safeParse({ txId: args.txId, depth: args.depth ?? 1 });
          if (!parsed.success) throw argumentError(parsed.error.issues);
          await ctx.caller();
          const [meta] = await ctx.deps.records.metaMany([parsed.data.txId.toLowerCase()]);
          if (!meta) throw notFound('TX_NOT_FOUND', `No record with txId ${parsed.data.txId.toLowerCase()}.`);
          return watchConfirmation(ctx.deps, meta, parsed.data.depth, Math.max(1000, ctx.deps.config.blockIntervalMs));
        },
        resolve: (update) => update,
      }),
    }),
  });
}
