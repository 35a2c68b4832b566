#!/usr/bin/env node
// Scaffolds an Nx project: project.json (tags), tsconfig.json, jest.config.js, src/index.ts,
// and registers the `@proofline/<name>` path alias for libs.
// Usage: node tools/scripts/add-project.mjs <dir> <type> <scope>   e.g. libs/identity/domain domain identity
import fs from 'node:fs';
import path from 'node:path';

const [dir, type, scope] = process.argv.slice(2);
if (!dir || !type || !scope) {
  console.error('usage: add-project.mjs <dir> <type> <scope>');
  process.exit(2);
}
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const abs = path.join(root, dir);
const isApp = dir.startsWith('apps/');
const name = isApp ? dir.split('/').slice(1).join('-') : dir.split('/').slice(1).join('-');
const depth = dir.split('/').length;
const up = '../'.repeat(depth);
fs.mkdirSync(path.join(abs, 'src'), { recursive: true });
const write = (file, text) => {
  const p = path.join(abs, file);
  if (!fs.existsSync(p)) fs.writeFileSync(p, text);
};
write(
  'project.json',
  JSON.stringify(
    {
      name,
      $schema: `${up}node_modules/nx/schemas/project-schema.json`,
      sourceRoot: `${dir}/src`,
      projectType: isApp ? 'application' : 'library',
      tags: [`type:${type}`, `scope:${scope}`],
      targets: { lint: {}, typecheck: {}, test: {} },
    },
    null,
    2,
  ) + '\n',
);
write(
  'tsconfig.json',
  JSON.stringify({ extends: `${up}tsconfig.base.json`, include: ['src/**/*.ts'] }, null, 2) + '\n',
);
write(
  'jest.config.js',
  `module.exports = {\n  displayName: '${name}',\n  preset: '${up}jest.preset.js',\n  rootDir: __dirname,\n};\n`,
);
write('src/index.ts', '');
if (!isApp) {
  const basePath = path.join(root, 'tsconfig.base.json');
  const base = JSON.parse(fs.readFileSync(basePath, 'utf8'));
  base.compilerOptions.paths ??= {};
  base.compilerOptions.paths[`@proofline/${name}`] = [`./${dir}/src/index.ts`];
  const sorted = Object.fromEntries(Object.entries(base.compilerOptions.paths).sort(([a], [b]) => a.localeCompare(b)));
  base.compilerOptions.paths = sorted;
  fs.writeFileSync(basePath, JSON.stringify(base, null, 2) + '\n');
}
console.log(`${dir}: ${isApp ? 'app' : `@proofline/${name}`} [type:${type}, scope:${scope}]`);
