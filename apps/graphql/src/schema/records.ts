import DataLoader from 'dataloader';
import { Kind as GraphQLKind } from 'graphql';
import type { FragmentDefinitionNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import { isUpdatable } from '@proofline/records-domain';
import type { Receipt, RecordMeta } from '@proofline/records-domain';
import type { Confirmation } from '@proofline/records-feature';
import type { TscMerkleProof } from '@proofline/chain-domain';
import type { GraphQLContext } from '../context';
import { toCursor } from '../cursor';
import { InvalidArgumentError, NotFoundError, typed } from '../errors';
import type { Builder, SchemaLimits } from './builder';
import { connectionComplexity, pageArgsSchema, pageInfo, toPageArgs, txIdSchema } from './common';
import type { PageInfoShape, addCommonTypes } from './common';

interface ChainEdgeShape {
  readonly cursor: string;
  /** The record read with its page, or its txId (then the LinkedRecord loader batches it). */
  readonly node: string | RecordMeta;
}
interface ChainConnectionShape {
  readonly edges: readonly ChainEdgeShape[];
  readonly pageInfo: PageInfoShape;
  readonly totalCount: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function textOf(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** null entries of a batch become per-item errors (masked): a listed txId must exist. */
function orMissing<T>(ids: readonly string[], values: readonly (T | null)[], what: string): (T | Error)[] {
  return values.map((v, i) => v ?? new Error(`${what} ${ids[i] ?? '?'} missing`));
}

/** Per-request loaders of record bytes and confirmations (a fresh context per request). */
interface RecordLoaders {
  readonly content: DataLoader<string, Buffer>;
  readonly confirmation: DataLoader<string, Confirmation | null>;
}
const loadersByContext = new WeakMap<GraphQLContext, RecordLoaders>();
function loadersOf(ctx: GraphQLContext): RecordLoaders {
  let loaders = loadersByContext.get(ctx);
  if (!loaders) {
    loaders = {
      content: new DataLoader(async (txIds: readonly string[]) =>
        orMissing(txIds, await ctx.deps.records.contentMany(txIds), 'content of'),
      ),
      confirmation: new DataLoader((txIds: readonly string[]) => ctx.deps.records.confirmationMany(txIds)),
    };
    loadersByContext.set(ctx, loaders);
  }
  return loaders;
}

/**
 * Names of the fields selected under `path` (e.g. edges → node) of the current field, through
 * inline fragments and fragment spreads; empty when the path is not selected.
 */
export function selectedUnder(
  info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>,
  path: readonly string[],
): Set<string> {
  let sets: SelectionSetNode[] = info.fieldNodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
  for (const name of path)
    sets = sets.flatMap((set) =>
      fieldsOf(set, info.fragments)
        .filter((f) => f.name === name && f.set)
        .map((f) => f.set as SelectionSetNode),
    );
  return new Set(sets.flatMap((set) => fieldsOf(set, info.fragments).map((f) => f.name)));
}

function fieldsOf(
  set: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  seen = new Set<string>(),
): { name: string; set: SelectionSetNode | undefined }[] {
  return set.selections.flatMap((sel) => {
    if (sel.kind === GraphQLKind.FIELD) return [{ name: sel.name.value, set: sel.selectionSet }];
    if (sel.kind === GraphQLKind.INLINE_FRAGMENT) return fieldsOf(sel.selectionSet, fragments, seen);
    const name = sel.name.value;
    const fragment = fragments[name];
    if (!fragment || seen.has(name)) return [];
    seen.add(name);
    return fieldsOf(fragment.selectionSet, fragments, seen);
  });
}

/**
 * Reads what a `chain` page's nodes need in bulk, one batched call per kind, only for what the
 * query selects, and keeps it in the request's context: the nodes and their content,
 * confirmation, previous and next then resolve synchronously (~5 promises per node fewer).
 */
async function prefetchPage(
  ctx: GraphQLContext,
  txIds: readonly string[],
  info: GraphQLResolveInfo,
): Promise<(RecordMeta | null)[] | null> {
  const selected = selectedUnder(info, ['edges', 'node']);
  if (selected.size === 0 || txIds.length === 0) return null;
  const { records } = ctx.deps;
  const [metas, contents, confirmations] = await Promise.all([
    records.metaMany(txIds),
    selected.has('content') ? records.contentMany(txIds) : null,
    selected.has('confirmation') ? records.confirmationMany(txIds) : null,
  ]);
  const { prefetched } = ctx;
  txIds.forEach((txId, i) => {
    const meta = metas[i];
    if (meta) prefetched.meta.set(txId, meta);
    const content = contents?.[i];
    if (content) prefetched.content.set(txId, content);
    if (confirmations) prefetched.confirmation.set(txId, confirmations[i] ?? null);
  });
  return metas;
}

/** A linked record by txId: the prefetched one at once, else through the loader (its txId). */
function linkedOrId(ctx: GraphQLContext, txId: string | null): RecordMeta | string | null {
  if (txId === null) return null;
  const meta = ctx.prefetched.meta.get(txId);
  return meta && meta.family === 'linked' ? meta : txId;
}

export function addRecordTypes(builder: Builder, limits: SchemaLimits, common: ReturnType<typeof addCommonTypes>) {
  const Kind = builder.enumType('RecordKind', {
    description: 'What a record transaction does.',
    values: {
      CREATE: { value: 'create', description: 'Starts a linked chain.' },
      UPDATE: { value: 'update', description: 'A new version linked to the previous record.' },
      DELETE: { value: 'delete', description: 'Terminates a linked chain (no content).' },
      INDEPENDENT: { value: 'independent', description: 'A stand-alone record.' },
    } as const,
  });
  const Publication = builder.enumType('PublicationState', {
    values: {
      PENDING: { value: 'pending', description: 'Accepted, not yet in the chain’s mempool.' },
      PUBLISHED: { value: 'published', description: 'In the mempool or mined.' },
      FAILED: { value: 'failed', description: 'Rejected by the chain for good.' },
    } as const,
  });
  const Encoder = builder.enumType('Encoder', { values: ['SHA256', 'Base64'] as const });

  const MerkleProof = builder.objectRef<TscMerkleProof>('MerkleProof').implement({
    description:
      'TSC Merkle proof (JSON form): fold `nodes` from the transaction up to the root in `target` (the 80-byte header).',
    fields: (t) => ({
      index: t.exposeInt('index'),
      txOrId: t.exposeString('txOrId'),
      target: t.exposeString('target'),
      nodes: t.stringList({ resolve: (p) => [...p.nodes], description: '"*" marks a duplicated node.' }),
      targetType: t.exposeString('targetType'),
      proofType: t.exposeString('proofType'),
      composite: t.exposeBoolean('composite'),
    }),
  });

  const ConfirmationRef = builder.objectRef<Confirmation>('Confirmation').implement({
    description: 'Where a mined record sits; the same object as REST status.',
    fields: (t) => ({
      confirmedBlocks: t.exposeInt('confirmedBlocks', { description: 'Tip height − block height + 1.' }),
      blockHash: t.exposeString('blockHash'),
      blockTimestamp: t.exposeString('blockTimestamp', { description: 'Header time, ISO 8601 UTC.' }),
      merkleProof: t.field({ type: MerkleProof, resolve: (c) => c.merkleProof }),
    }),
  });

  const ReceiptRef = builder.objectRef<Receipt>('Receipt').implement({
    description:
      'Everything needed to check the record with no service (REST `GET …/{txId}/receipt`; `npm run cli -- receipt verify`). ' +
      'It does not prove that the block is on the longest chain: compare blockHash with a headers service.',
    fields: (t) => ({
      version: t.exposeInt('version'),
      txId: t.exposeString('txId'),
      family: t.exposeString('family', { description: '`records` or `linkedrecords`.' }),
      prevTxId: t.string({
        nullable: true,
        description: 'Linked records: the record this one links to (null for a create and for independent records).',
        resolve: (r) => r.prevTxId ?? null,
      }),
      rawTx: t.exposeString('rawTx', { description: 'The serialized transaction, hex.' }),
      encoding: t.field({
        type: [Encoder],
        description: 'The encoder steps, in order; salts are never included.',
        resolve: (r) => [...r.encoding],
      }),
      contentType: t.exposeString('contentType'),
      merkleProof: t.field({ type: MerkleProof, resolve: (r) => r.merkleProof }),
      blockHeader: t.exposeString('blockHeader', { description: 'The 80-byte block header, hex.' }),
      blockHash: t.exposeString('blockHash'),
      blockHeight: t.exposeInt('blockHeight'),
      beef: t.exposeString('beef', {
        description: 'Atomic BEEF (BRC-95) of the transaction with its Merkle path, hex.',
      }),
    }),
  });

  const Content = builder.objectRef<Buffer>('RecordContent').implement({
    description: 'The exact bytes on chain.',
    fields: (t) => ({
      text: t.string({
        nullable: true,
        description: 'The bytes as UTF-8 text; null when they are not valid UTF-8.',
        resolve: (b) => textOf(b),
      }),
      base64: t.string({ resolve: (b) => b.toString('base64') }),
      byteLength: t.int({ resolve: (b) => b.length }),
    }),
  });

  const RecordInterface = builder.interfaceRef<RecordMeta>('Record').implement({
    description: 'A record transaction (linked or independent).',
    resolveType: (r) => (r.family === 'linked' ? 'LinkedRecord' : 'IndependentRecord'),
    fields: (t) => ({
      txId: t.exposeString('txId'),
      kind: t.field({ type: Kind, resolve: (r) => r.kind }),
      contentType: t.exposeString('contentType', {
        description: 'As the final encoding step; unencoded: application/octet-stream.',
      }),
      encoding: t.field({
        type: [Encoder],
        description: 'The encoder steps applied, in order (salts are never stored).',
        resolve: (r) => r.encoders,
      }),
      byteLength: t.exposeInt('byteLength'),
      acceptedAt: t.exposeString('acceptedAt'),
      publication: t.field({ type: Publication, resolve: (r) => r.state }),
      content: t.field({
        type: Content,
        description: 'The bytes on chain (one batched read for every record of the query).',
        resolve: (r, _args, ctx) => ctx.prefetched.content.get(r.txId) ?? loadersOf(ctx).content.load(r.txId),
      }),
      confirmation: t.field({
        type: ConfirmationRef,
        nullable: true,
        description: 'null until mined with its proof.',
        resolve: (r, _args, ctx) => {
          const { confirmation } = ctx.prefetched;
          return confirmation.has(r.txId)
            ? (confirmation.get(r.txId) ?? null)
            : loadersOf(ctx).confirmation.load(r.txId);
        },
      }),
      receipt: t.loadable({
        type: ReceiptRef,
        nullable: true,
        description: 'The receipt; null until mined with its proof (one batched read for every record of the query).',
        load: (txIds: string[], ctx) => ctx.deps.receipts.receiptMany(txIds) as Promise<Receipt[]>,
        resolve: (r) => r.txId,
      }),
    }),
  });

  const LinkedRecord = builder.loadableObjectRef<RecordMeta, string>('LinkedRecord', {
    load: async (txIds: string[], ctx: GraphQLContext) => {
      const metas = await ctx.deps.records.metaMany(txIds);
      return metas.map((m, i) =>
        m && m.family === 'linked' ? m : new Error(`linked record ${txIds[i] ?? '?'} missing`),
      );
    },
  });
  LinkedRecord.implement({
    description: 'A record of a linked chain.',
    interfaces: [RecordInterface],
    isTypeOf: (r) => (r as RecordMeta).family === 'linked',
    fields: (t) => ({
      chainId: t.exposeString('chainId', { description: 'txId of the chain’s create.' }),
      position: t.exposeInt('position', { description: '0 for the create, +1 per link.' }),
      cursor: t.string({
        description: 'This record’s cursor in `chain` (walk from here with `chain(first: n, after: cursor)`).',
        resolve: (r) => toCursor('chain', r.position),
      }),
      updatable: t.boolean({
        description: 'No accepted record links to this one yet (and it is not a delete).',
        resolve: (r) => isUpdatable(r),
      }),
    }),
  });

  const IndependentRecord = builder.objectRef<RecordMeta>('IndependentRecord').implement({
    description: 'A stand-alone record.',
    interfaces: [RecordInterface],
    isTypeOf: (r) => (r as RecordMeta).family === 'independent',
  });

  const ChainEdge = builder.objectRef<ChainEdgeShape>('LinkedRecordEdge').implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.field({ type: LinkedRecord, resolve: (e) => e.node }),
    }),
  });
  const ChainConnection = builder.objectRef<ChainConnectionShape>('LinkedRecordConnection').implement({
    description: 'A page of a linked chain, ordered from the create to the end.',
    fields: (t) => ({
      edges: t.field({ type: [ChainEdge], complexity: { field: 1, multiplier: 1 }, resolve: (c) => [...c.edges] }),
      pageInfo: t.field({ type: common.PageInfo, resolve: (c) => c.pageInfo }),
      totalCount: t.exposeInt('totalCount', { description: 'Records in the whole chain.' }),
    }),
  });

  builder.objectFields(LinkedRecord, (t) => ({
    previous: t.field({
      type: LinkedRecord,
      nullable: true,
      description: 'The record this one updates or deletes; null for a create. Needs the navigate feature.',
      resolve: (r, _args, ctx) => {
        ctx.deps.records.requireNavigation();
        return linkedOrId(ctx, r.prevTxId);
      },
    }),
    next: t.field({
      type: LinkedRecord,
      nullable: true,
      description: 'The record that updates or deletes this one; null at the chain’s end. Needs the navigate feature.',
      resolve: (r, _args, ctx) => {
        ctx.deps.records.requireNavigation();
        return linkedOrId(ctx, r.nextTxId);
      },
    }),
    chain: t.field({
      type: ChainConnection,
      nullable: true,
      description:
        `The whole chain this record belongs to, as a Relay connection: \`first\`/\`after\` walk towards the end, \`last\`/\`before\` towards the create. ` +
        'Page size 1..MAX_LINKS (default 1000); 50 when neither first nor last is given. Needs the navigate feature.',
      args: {
        first: t.arg.int(),
        after: t.arg.string(),
        last: t.arg.int(),
        before: t.arg.string(),
      },
      validate: pageArgsSchema(limits, 'chain'),
      complexity: connectionComplexity(limits),
      resolve: async (r, args, ctx, info) => {
        const page = await ctx.deps.records.chainPage(r.chainId, toPageArgs('chain', limits, args));
        const metas = await prefetchPage(ctx, page.txIds, info);
        return {
          totalCount: page.total,
          edges: page.txIds.map((txId, i) => {
            const meta = metas?.[i];
            return { cursor: toCursor('chain', page.start + i), node: meta && meta.family === 'linked' ? meta : txId };
          }),
          pageInfo: pageInfo('chain', page.start, page.txIds.length, page.total, toCursor),
        };
      },
    }),
  }));

  builder.queryFields((t) => ({
    linkedRecord: t.field({
      type: LinkedRecord,
      nullable: true,
      description: 'A linked record by txId. Any valid key.',
      args: { txId: t.arg.string({ required: true, validate: txIdSchema }) },
      errors: { types: [NotFoundError, InvalidArgumentError], directResult: true },
      resolve: async (_root, args, ctx) => {
        await ctx.caller();
        return typed(() => ctx.deps.records.meta('linked', args.txId));
      },
    }),
    record: t.field({
      type: IndependentRecord,
      nullable: true,
      description: 'An independent record by txId. Any valid key.',
      args: { txId: t.arg.string({ required: true, validate: txIdSchema }) },
      errors: { types: [NotFoundError, InvalidArgumentError], directResult: true },
      resolve: async (_root, args, ctx) => {
        await ctx.caller();
        return typed(() => ctx.deps.records.meta('independent', args.txId));
      },
    }),
  }));

  return { RecordInterface, LinkedRecord, IndependentRecord, ConfirmationRef, Publication };
}
