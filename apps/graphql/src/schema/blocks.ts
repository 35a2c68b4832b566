import { z } from 'zod';
import type { Block as ChainBlock, ChainTip } from '@proofline/chain-domain';
import { badRequest, notFound } from '@proofline/shared-errors';
import { toCursor } from '../cursor';
import { InvalidArgumentError, NotFoundError, typed } from '../errors';
import type { Builder, SchemaLimits } from './builder';
import { connectionComplexity, pageArgsSchema, pageInfo, toPageArgs } from './common';
import type { PageArgs, PageInfoShape, addCommonTypes } from './common';
import type { addRecordTypes } from './records';

interface BlockTxShape {
  readonly txId: string;
  readonly index: number;
}
interface BlockTxConnectionShape {
  readonly edges: readonly { readonly cursor: string; readonly node: BlockTxShape }[];
  readonly pageInfo: PageInfoShape;
  readonly totalCount: number;
}

/** A block hash argument: 64 hex characters (either case). */
export const HASH = /^[0-9a-fA-F]{64}$/;

/** Window [start, end) of `total` items for Relay page arguments (bounds exclusive). */
export function windowOf(page: PageArgs, total: number): { start: number; end: number } {
  const lower = page.after === undefined ? 0 : page.after + 1;
  const upper = page.before === undefined ? total : Math.min(page.before, total);
  if (page.last !== undefined) {
    const end = Math.max(upper, lower);
    return { start: Math.max(end - page.last, lower), end };
  }
  const start = Math.min(lower, total);
  return { start, end: Math.max(start, Math.min(start + (page.first ?? 0), upper)) };
}

export function addBlockTypes(
  builder: Builder,
  limits: SchemaLimits,
  common: ReturnType<typeof addCommonTypes>,
  records: ReturnType<typeof addRecordTypes>,
) {
  const BlockTransaction = builder.objectRef<BlockTxShape>('BlockTransaction').implement({
    fields: (t) => ({
      txId: t.exposeString('txId'),
      index: t.exposeInt('index', {
        description:
          'Position in this list: the transactions of the block this service published and proved, in block order.',
      }),
      coinbase: t.boolean({
        description:
          'Always false over ARC (the service lists only the transactions it proved); kept for compatibility.',
        resolve: () => false,
      }),
      record: t.loadable({
        type: records.RecordInterface,
        nullable: true,
        description: 'The record this transaction publishes; null for the coinbase and other transactions.',
        load: (txIds: string[], ctx) => ctx.deps.records.metaMany(txIds) as Promise<never[]>,
        resolve: (tx) => tx.txId,
      }),
    }),
  });
  const Edge = builder.objectRef<BlockTxConnectionShape['edges'][number]>('BlockTransactionEdge').implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.field({ type: BlockTransaction, resolve: (e) => e.node }),
    }),
  });
  const Connection = builder.objectRef<BlockTxConnectionShape>('BlockTransactionConnection').implement({
    fields: (t) => ({
      edges: t.field({ type: [Edge], complexity: { field: 1, multiplier: 1 }, resolve: (c) => [...c.edges] }),
      pageInfo: t.field({ type: common.PageInfo, resolve: (c) => c.pageInfo }),
      totalCount: t.exposeInt('totalCount', { description: 'Transactions of the block this service proved.' }),
    }),
  });

  const Block = builder.objectRef<ChainBlock>('Block');
  Block.implement({
    description:
      'A block as this service verified it (its header checked against HEADERS_URL): header fields and the transactions it proved in it.',
    fields: (t) => ({
      hash: t.exposeString('hash'),
      height: t.exposeInt('height'),
      version: t.int({ resolve: (b) => b.header.version }),
      previousHash: t.string({ description: 'All zeros for the genesis block.', resolve: (b) => b.header.prevHash }),
      merkleRoot: t.string({ resolve: (b) => b.header.merkleRoot }),
      time: t.string({ description: 'Header time, ISO 8601 UTC.', resolve: (b) => b.time.toISOString() }),
      bits: t.string({
        description: 'Compact difficulty target, 8 hex digits.',
        resolve: (b) => b.header.bits.toString(16).padStart(8, '0'),
      }),
      nonce: t.float({ description: 'uint32.', resolve: (b) => b.header.nonce }),
      header: t.exposeString('headerHex', { description: 'The 80-byte header, hex (the `target` of TSC proofs).' }),
      txCount: t.exposeInt('txCount'),
      previous: t.field({
        type: Block,
        nullable: true,
        resolve: (b, _args, ctx) => (b.height === 0 ? null : ctx.deps.chain.blockByHash(b.header.prevHash)),
      }),
      transactions: t.field({
        type: Connection,
        nullable: true,
        description:
          'The transactions this service proved in the block, in block order (ARC serves no block bodies). Page size 1..MAX_LINKS (default 1000); 50 when neither first nor last is given.',
        args: { first: t.arg.int(), after: t.arg.string(), last: t.arg.int(), before: t.arg.string() },
        validate: pageArgsSchema(limits, 'tx'),
        complexity: connectionComplexity(limits),
        resolve: async (b, args, ctx) => {
          const { start, end } = windowOf(toPageArgs('tx', limits, args), b.txCount);
          const ids = (await ctx.deps.chain.blockTxIds(b.hash, start, end)) ?? [];
          return {
            totalCount: b.txCount,
            edges: ids.map((txId, i) => ({ cursor: toCursor('tx', start + i), node: { txId, index: start + i } })),
            pageInfo: pageInfo('tx', start, ids.length, b.txCount, toCursor),
          };
        },
      }),
    }),
  });

  const Tip = builder.objectRef<ChainTip>('Tip').implement({
    description: 'The newest block.',
    fields: (t) => ({
      hash: t.exposeString('hash'),
      height: t.exposeInt('height'),
      time: t.string({ resolve: (tip) => tip.time.toISOString() }),
      block: t.field({
        type: Block,
        nullable: true,
        resolve: (tip, _args, ctx) => ctx.deps.chain.blockByHash(tip.hash),
      }),
    }),
  });

  builder.queryFields((t) => ({
    block: t.field({
      type: Block,
      nullable: true,
      description: 'A block by `hash` or by `height` (exactly one). Any valid key.',
      args: {
        hash: t.arg.string({ validate: z.string().regex(HASH, 'must be 64 hexadecimal characters.').nullish() }),
        height: t.arg.int({ validate: z.number().int().min(0, 'must be 0 or more.').nullish() }),
      },
      validate: z
        .object({ hash: z.string().nullish(), height: z.number().nullish() })
        .refine((a) => (a.hash == null) !== (a.height == null), {
          message: 'Give exactly one of hash or height.',
          path: ['block'],
        }),
      errors: { types: [NotFoundError, InvalidArgumentError], directResult: true },
      resolve: async (_root, args, ctx) => {
        await ctx.caller();
        return typed(async () => {
          const block =
            args.hash != null
              ? await ctx.deps.chain.blockByHash(args.hash.toLowerCase())
              : await ctx.deps.chain.blockByHeight(args.height ?? -1);
          if (!block) {
            if (args.hash == null && args.height == null)
              throw badRequest('BLOCK_SELECTOR_INVALID', 'Give exactly one of hash or height.');
            throw notFound(
              'BLOCK_NOT_FOUND',
              args.hash != null
                ? `No block with hash ${args.hash.toLowerCase()}.`
                : `No block at height ${String(args.height)}.`,
            );
          }
          return block;
        });
      },
    }),
    tip: t.field({
      type: Tip,
      nullable: true,
      description: 'The chain tip; null before the first block. Any valid key.',
      resolve: async (_root, _args, ctx) => {
        await ctx.caller();
        return ctx.deps.chain.tip();
      },
    }),
  }));

  return { Block };
}
