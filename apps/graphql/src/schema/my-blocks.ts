import { z } from 'zod';
import type { OwnerBlock } from '@proofline/chain-domain';
import type { RecordMeta } from '@proofline/records-domain';
import type { GraphQLContext } from '../context';
import { blockKeyOf, toBlockCursor, toCursor } from '../cursor';
import { NotFoundError } from '../errors';
import { HASH, windowOf } from './blocks';
import type { addBlockTypes } from './blocks';
import type { Builder, SchemaLimits } from './builder';
import { connectionComplexity, pageArgsSchema, pageInfo, toPageArgs } from './common';
import type { PageInfoShape, addCommonTypes } from './common';
import type { addRecordTypes } from './records';

/** A block of the caller's tenant's block list, with the tenant it was read for. */
interface MyBlockShape extends OwnerBlock {
  readonly owner: string;
}
interface MyBlockConnectionShape {
  readonly edges: readonly { readonly cursor: string; readonly node: MyBlockShape }[];
  readonly pageInfo: PageInfoShape;
  readonly totalCount: number;
}
interface MyRecordConnectionShape {
  readonly edges: readonly { readonly cursor: string; readonly txId: string }[];
  readonly pageInfo: PageInfoShape;
  readonly totalCount: number;
}

/** The tip's height, read once per request however many blocks ask (-1 before the first block). */
const tipHeights = new WeakMap<GraphQLContext, Promise<number>>();
function tipHeightOf(ctx: GraphQLContext): Promise<number> {
  let height = tipHeights.get(ctx);
  if (!height) tipHeights.set(ctx, (height = ctx.deps.chain.tip().then((tip) => tip?.height ?? -1)));
  return height;
}

/**
 * The caller's blocks: the blocks holding records of the key's tenant (the chain's owner index,
 * kept as proofs are stored), newest first, each with the tenant's records in it. Another tenant's
 * key never reads them: the tenant comes from the key, never from an argument.
 */
export function addMyBlockTypes(
  builder: Builder,
  limits: SchemaLimits,
  common: ReturnType<typeof addCommonTypes>,
  records: ReturnType<typeof addRecordTypes>,
  blocks: ReturnType<typeof addBlockTypes>,
) {
  const MyRecordEdge = builder.objectRef<MyRecordConnectionShape['edges'][number]>('MyBlockRecordEdge').implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.loadable({
        type: records.RecordInterface,
        load: async (txIds: string[], ctx) => {
          const metas = await ctx.deps.records.metaMany(txIds);
          return metas.map((m, i) => m ?? new Error(`record ${txIds[i] ?? '?'} missing`)) as (RecordMeta | Error)[];
        },
        resolve: (e) => e.txId,
      }),
    }),
  });
  const MyRecordConnection = builder.objectRef<MyRecordConnectionShape>('MyBlockRecordConnection').implement({
    description: "The caller's tenant's records proven in one block, in the order their proofs were stored.",
    fields: (t) => ({
      edges: t.field({ type: [MyRecordEdge], complexity: { field: 1, multiplier: 1 }, resolve: (c) => [...c.edges] }),
      pageInfo: t.field({ type: common.PageInfo, resolve: (c) => c.pageInfo }),
      totalCount: t.exposeInt('totalCount', { description: "The tenant's records in this block." }),
    }),
  });

  const MyBlock = builder.objectRef<MyBlockShape>('MyBlock').implement({
    description: "A block holding records of the caller's tenant (proven by this service).",
    fields: (t) => ({
      hash: t.exposeString('hash'),
      height: t.exposeInt('height'),
      time: t.string({ description: 'Header time, ISO 8601 UTC.', resolve: (b) => b.time.toISOString() }),
      recordCount: t.exposeInt('count', { description: "The tenant's records proven in this block." }),
      confirmations: t.int({
        description:
          'Tip height − block height + 1, as a record’s confirmedBlocks (0 while the tip is below the block).',
        resolve: async (b, _args, ctx) => Math.max(0, (await tipHeightOf(ctx)) - b.height + 1),
      }),
      block: t.field({
        type: blocks.Block,
        nullable: true,
        description: 'The whole block (header fields, every transaction this service proved in it).',
        resolve: (b, _args, ctx) => ctx.deps.chain.blockByHash(b.hash),
      }),
      records: t.field({
        type: MyRecordConnection,
        description:
          "The tenant's records in this block, in the order their proofs were stored (block order within one batch). " +
          'Page size 1..MAX_LINKS (default 1000); 50 when neither first nor last is given.',
        args: { first: t.arg.int(), after: t.arg.string(), last: t.arg.int(), before: t.arg.string() },
        validate: pageArgsSchema(limits, 'mine'),
        complexity: connectionComplexity(limits),
        resolve: async (b, args, ctx) => {
          const { start, end } = windowOf(toPageArgs('mine', limits, args), b.count);
          const { count, txIds } = await ctx.deps.chain.ownerTxIds(b.owner, b.hash, start, end);
          return {
            totalCount: count,
            edges: txIds.map((txId, i) => ({ cursor: toCursor('mine', start + i), txId })),
            pageInfo: pageInfo('mine', start, txIds.length, count, toCursor),
          };
        },
      }),
    }),
  });
  const MyBlockEdge = builder.objectRef<MyBlockConnectionShape['edges'][number]>('MyBlockEdge').implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.field({ type: MyBlock, resolve: (e) => e.node }),
    }),
  });
  const MyBlockConnection = builder.objectRef<MyBlockConnectionShape>('MyBlockConnection').implement({
    description: "The blocks holding the caller's tenant's records, newest first (height, then hash).",
    fields: (t) => ({
      edges: t.field({ type: [MyBlockEdge], complexity: { field: 1, multiplier: 1 }, resolve: (c) => [...c.edges] }),
      pageInfo: t.field({ type: common.PageInfo, resolve: (c) => c.pageInfo }),
      totalCount: t.exposeInt('totalCount', { description: "All the blocks holding the tenant's records." }),
    }),
  });

  builder.queryFields((t) => ({
    myBlocks: t.field({
      type: MyBlockConnection,
      nullable: true,
      description:
        "The blocks holding records of the caller's tenant, newest first, as a Relay connection: `first`/`after` walk " +
        'towards older blocks, `last`/`before` towards newer ones; cursors hold still as blocks arrive. Page size ' +
        '1..MAX_LINKS (default 1000); 50 when neither first nor last is given. Any valid key; only its own tenant.',
      args: { first: t.arg.int(), after: t.arg.string(), last: t.arg.int(), before: t.arg.string() },
      validate: pageArgsSchema(limits, 'block'),
      complexity: connectionComplexity(limits),
      resolve: async (_root, args, ctx) => {
        const { tenant } = await ctx.caller();
        const after = args.after == null ? null : blockKeyOf(args.after);
        const before = args.before == null ? null : blockKeyOf(args.before);
        const window = await ctx.deps.chain.ownerBlocks(tenant, {
          ...(args.last == null ? { first: args.first ?? limits.defaultPageSize } : { last: args.last }),
          ...(after ? { after } : {}),
          ...(before ? { before } : {}),
        });
        const edges = window.blocks.map((b) => ({ cursor: toBlockCursor(b), node: { ...b, owner: tenant } }));
        return {
          totalCount: window.total,
          edges,
          pageInfo: {
            hasNextPage: window.hasOlder,
            hasPreviousPage: window.hasNewer,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges[edges.length - 1]?.cursor ?? null,
          },
        };
      },
    }),
    myBlock: t.field({
      type: MyBlock,
      nullable: true,
      description:
        "A block by hash as the caller's tenant sees it: its records there. BLOCK_NOT_FOUND when none of the tenant's " +
        'records is proven in it. Any valid key; only its own tenant.',
      args: {
        hash: t.arg.string({ required: true, validate: z.string().regex(HASH, 'must be 64 hexadecimal characters.') }),
      },
      errors: { types: [NotFoundError], directResult: true },
      resolve: async (_root, args, ctx) => {
        const { tenant } = await ctx.caller();
        const hash = args.hash.toLowerCase();
        const block = await ctx.deps.chain.ownerBlock(tenant, hash);
        if (!block) throw new NotFoundError('BLOCK_NOT_FOUND', `No record of this tenant is proven in block ${hash}.`);
        return { ...block, owner: tenant };
      },
    }),
  }));
}
