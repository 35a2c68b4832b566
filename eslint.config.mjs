// Lint: typescript-eslint (type-aware where it matters) plus Nx module boundaries with real
// constraints. Domain libs may not import I/O packages; only the chain libs import @bsv/sdk.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const IO_PACKAGES = [
  'express',
  'graphql',
  'graphql-yoga',
  '@pothos/*',
  'bullmq',
  'ioredis',
  'redis',
  'redis-om',
  '@bsv/sdk',
  'pino',
  'jose',
];

const UTIL_BANNED = ['bullmq', 'ioredis', 'redis', 'redis-om', '@bsv/sdk', '@pothos/*'];

/** Module-boundary constraints; spec files may also import the testing libs. */
function boundaries(allowTesting) {
  const t = (tags) => (allowTesting ? [...tags, 'type:testing'] : tags);
  return {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: [
      {
        sourceTag: 'type:app',
        onlyDependOnLibsWithTags: t(['type:feature', 'type:data-access', 'type:domain', 'type:util']),
      },
      {
        sourceTag: 'type:feature',
        onlyDependOnLibsWithTags: t(['type:feature', 'type:data-access', 'type:domain', 'type:util']),
      },
      { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: t(['type:data-access', 'type:domain', 'type:util']) },
      {
        sourceTag: 'type:domain',
        onlyDependOnLibsWithTags: t(['type:domain', 'type:util']),
        bannedExternalImports: allowTesting ? [] : IO_PACKAGES,
      },
      {
        sourceTag: 'type:util',
        onlyDependOnLibsWithTags: t(['type:util']),
        bannedExternalImports: allowTesting ? [] : UTIL_BANNED,
      },
      {
        sourceTag: 'type:testing',
        onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:domain', 'type:util', 'type:testing'],
      },
      { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
      { sourceTag: 'scope:chain', onlyDependOnLibsWithTags: ['scope:chain', 'scope:shared'] },
      {
        sourceTag: 'scope:identity',
        onlyDependOnLibsWithTags: ['scope:identity', 'scope:shared'],
        bannedExternalImports: allowTesting ? [] : ['@bsv/sdk'],
      },
      {
        sourceTag: 'scope:records',
        onlyDependOnLibsWithTags: ['scope:records', 'scope:chain', 'scope:shared'],
        bannedExternalImports: allowTesting ? [] : ['@bsv/sdk'],
      },
      {
        sourceTag: 'scope:webhooks',
        onlyDependOnLibsWithTags: ['scope:webhooks', 'scope:records', 'scope:chain', 'scope:shared'],
        bannedExternalImports: allowTesting ? [] : ['@bsv/sdk'],
      },
      {
        sourceTag: 'scope:app',
        onlyDependOnLibsWithTags: [
          'scope:app',
          'scope:records',
          'scope:identity',
          'scope:chain',
          'scope:webhooks',
          'scope:shared',
        ],
        bannedExternalImports: allowTesting ? [] : ['@bsv/sdk'],
      },
    ],
  };
}

export default [
  { ignores: ['**/node_modules/**', '**/dist/**', '**/.nx/**', '.jest-cache/**', '.data/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': ['error', boundaries(false)],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    // Tests may use any package (e.g. @bsv/sdk as an independent verifier) and the testing libs.
    files: ['**/*.spec.ts', 'libs/shared/testing/**/*.ts', 'apps/*/src/testing/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off', '@nx/enforce-module-boundaries': ['error', boundaries(true)] },
  },
  {
    files: ['apps/cli/**/*.ts', 'apps/launcher/**/*.ts', 'bench/**/*.ts', 'tools/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
];
