import { isUpdatable } from '@proofline/records-domain';
import type { RecordMeta } from '@proofline/records-domain';
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
  /** txId: the LinkedRecord loader batches every node of a page. */
  readonly node: string;
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
    description: 'TSC Merkle proof (JSON form): fold `nodes` from the transaction up to the root in `target` (the 80-byte header).',
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

  const Content = builder.objectRef<Buffer>('RecordContent').implement({
    description: 'The exact bytes on chain.',
    fields: (t) => ({
      text: t.string({ nullable: true, description: 'The bytes as UTF-8 text; null when they are not valid UTF-8.', resolve: (b) => textOf(b) }),
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
      contentType: t.exposeString('contentType', { description: 'As the final encoding step; unencoded: application/octet-stream.' }),
      encoding: t.field({ type: [Encoder], description: 'The encoder steps applied, in order (salts are never stored).', resolve: (r) => r.encoders }),
      byteLength: t.exposeInt('byteLength'),
      acceptedAt: t.exposeString('acceptedAt'),
      publication: t.field({ type: Publication, resolve: (r) => r.state }),
      content: t.loadable({
        type: Content,
        description: 'The bytes on chain (one batched read for every record of the query).',
        load: async (txIds: string[], ctx) => orMissing(txIds, await ctx.deps.records.contents(txIds), 'content of'),
        resolve: (r) => r.txId,
      }),
      confirmation: t.loadable({
        type: ConfirmationRef,
        nullable: true,
        description: 'null until mined with its proof.',
        load: (txIds: string[], ctx) => ctx.deps.records.confirmations(txIds) as Promise<Confirmation[]>,
        resolve: (r) => r.txId,
      }),
    }),
  });

  const LinkedRecord = builder.loadableObjectRef<RecordMeta, string>('LinkedRecord', {
    load: async (txIds: string[], ctx: GraphQLContext) => {
      const metas = await ctx.deps.records.records(txIds);
      return metas.map((m, i) => (m && m.family === 'linked' ? m : new Error(`linked record ${txIds[i] ?? '?'} missing`)));
    },
  });
  LinkedRecord.implement({
    description: 'A record of a linked chain.',
    interfaces: [RecordInterface],
    isTypeOf: (r) => (r as RecordMeta).family === 'linked',
    fields: (t) => ({
      chainId: t.exposeString('chainId', { description: 'txId of the chain’s create.' }),
      position: t.exposeInt('position', { description: '0 for the create, +1 per link.' }),
      cursor: t.string({ description: 'This record’s cursor in `chain` (walk from here with `chain(first: n, after: cursor)`).', resolve: (r) => toCursor('chain', r.position) }),
      updatable: t.boolean({ description: 'No accepted record links to this one yet (and it is not a delete).', resolve: (r) => isUpdatable(r) }),
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
        return r.prevTxId;
      },
    }),
    next: t.field({
      type: LinkedRecord,
      nullable: true,
      description: 'The record that updates or deletes this one; null at the chain’s end. Needs the navigate feature.',
      resolve: (r, _args, ctx) => {
        ctx.deps.records.requireNavigation();
        return r.nextTxId;
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
      resolve: async (r, args, ctx) => {
        const page = await ctx.deps.records.chainPage(r.chainId, toPageArgs('chain', limits, args));
        return {
          totalCount: page.total,
          edges: page.txIds.map((txId, i) => ({ cursor: toCursor('chain', page.start + i), node: txId })),
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
        return typed(() => ctx.deps.records.find('linked', args.txId));
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
        return typed(() => ctx.deps.records.find('independent', args.txId));
      },
    }),
  }));

  return { RecordInterface, LinkedRecord, IndependentRecord, ConfirmationRef, Publication };
}
