import fs from 'node:fs';
import { printSchema } from 'graphql';
import { SCHEMA_FILE, schemaSdl } from './print-schema';
import { buildSchema, schemaLimits } from './schema';

describe('schema artifact', () => {
  it('apps/graphql/schema.graphql is printSchema(built schema): regenerate with `npx tsx apps/graphql/src/print-schema.ts`', () => {
    expect(fs.readFileSync(SCHEMA_FILE, 'utf8')).toBe(schemaSdl());
  });

  it('limits change validation and cost, never the printed schema', () => {
    expect(printSchema(buildSchema(schemaLimits(10)))).toBe(printSchema(buildSchema(schemaLimits(5000))));
  });
});
