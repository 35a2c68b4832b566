import SchemaBuilder from '@pothos/core';
import type { GraphQLSchema } from 'graphql';
import { APP_VERSION } from '@proofline/shared-config';

/** Per-request GraphQL context. */
export interface GraphQLContext {
  readonly requestId: string;
}

/** Builds the Pothos schema. Resolvers call the same use cases as REST. */
export function buildSchema(): GraphQLSchema {
  const builder = new SchemaBuilder<{ Context: GraphQLContext }>({});
  builder.queryType({
    fields: (t) => ({
      health: t.string({ description: 'Always "ok" while the GraphQL app serves requests.', resolve: () => 'ok' }),
      version: t.string({ description: 'The running release.', resolve: () => APP_VERSION }),
    }),
  });
  return builder.toSchema();
}
