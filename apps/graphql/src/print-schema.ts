/**
 * Writes apps/graphql/schema.graphql from the built schema (the committed artifact that
 * schema.spec.ts compares with printSchema). Run: `npx tsx apps/graphql/src/print-schema.ts`
 * `--check` exits 1 when the file is out of date.
 */
import fs from 'node:fs';
import path from 'node:path';
import { printSchema } from 'graphql';
import { buildSchema } from './schema';

export const SCHEMA_FILE = path.join(__dirname, '..', 'schema.graphql');

/** The SDL as committed: printSchema of the built schema plus a trailing newline. */
export function schemaSdl(): string {
  return `${printSchema(buildSchema())}\n`;
}

if (require.main === module) {
  const sdl = schemaSdl();
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(SCHEMA_FILE) ? fs.readFileSync(SCHEMA_FILE, 'utf8') : '';
    if (current !== sdl) {
      process.stderr.write(`${SCHEMA_FILE} is out of date: run npx tsx apps/graphql/src/print-schema.ts\n`);
      process.exit(1);
    }
  } else {
    fs.writeFileSync(SCHEMA_FILE, sdl);
    process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
  }
}
