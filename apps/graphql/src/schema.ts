import type { GraphQLSchema } from 'graphql';
import { APP_VERSION } from '@proofline/shared-config';
import { createBuilder, schemaLimits } from './schema/builder';
import type { SchemaLimits } from './schema/builder';
import { addBlockTypes } from './schema/blocks';
import { addCommonTypes } from './schema/common';
import { addConfirmationSubscription } from './schema/confirmations';
import { addKeyTypes } from './schema/keys';
import { addMyBlockTypes } from './schema/my-blocks';
import { addRecordTypes } from './schema/records';

export type { GraphQLContext } from './context';
export { schemaLimits } from './schema/builder';
export type { SchemaLimits } from './schema/builder';

/**
 * Builds the Pothos schema. Resolvers parse input, call one use case (RecordReads,
 * the identity parts, the block reader and its tenant block index) and map the result; no rule is decided here.
 * `limits` changes validation and cost limits only, never the printed schema.
 */
export function buildSchema(limits: SchemaLimits = schemaLimits(1000)): GraphQLSchema {
  const builder = createBuilder(limits);
  builder.queryType({
    fields: (t) => ({
      health: t.string({
        description: 'Always "ok" while the GraphQL app serves requests. No key needed.',
        resolve: () => 'ok',
      }),
      version: t.string({ description: 'The running release. No key needed.', resolve: () => APP_VERSION }),
    }),
  });
  const common = addCommonTypes(builder);
  const records = addRecordTypes(builder, limits, common);
  const blocks = addBlockTypes(builder, limits, common, records);
  addMyBlockTypes(builder, limits, common, records, blocks);
  addKeyTypes(builder);
  addConfirmationSubscription(builder, limits, records);
  return builder.toSchema({ sortSchema: true });
}
