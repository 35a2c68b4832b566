// Shared jest preset for every project: TypeScript via swc (type-checking is the separate
// `typecheck` step), tsconfig path aliases mapped to sources, and a private redis-server.
const path = require('node:path');
const fs = require('node:fs');

const root = __dirname;
const base = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.base.json'), 'utf8'));
const moduleNameMapper = {};
for (const [alias, targets] of Object.entries(base.compilerOptions.paths ?? {})) {
  moduleNameMapper[`^${alias.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`] = path.join(root, targets[0]);
}

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|j)s$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: ['**/*.spec.ts'],
  moduleNameMapper,
  cacheDirectory: path.join(root, '.jest-cache'),
  globalSetup: path.join(root, 'tools/jest/redis-global-setup.js'),
  globalTeardown: path.join(root, 'tools/jest/redis-global-teardown.js'),
  testTimeout: 30000,
};
