// Lint: typescript-eslint (type-aware where it matters) plus Nx module boundaries with real
// constraints. Domain libs may not import I/O packages; only the chain libs import @bsv/sdk.
// The devnet (libs/devnet: type:devnet, scope:devnet) is an app of its own and a test double,
// not a library of the service: only apps/devnet (scope:devnet), type:testing libs and test
// files may import it. Libraries are kept out by their type tag (no type lists type:devnet but
// type:testing), the service's apps by their scope tag (scope:app does not list scope:devnet).
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

/** Module-boundary constraints; test files (allowTesting) may also import the testing libs and the devnet. */
function boundaries(allowTesting) {
  const t = (tags) => (allowTesting ? [...tags, 'type:testing', 'type:devnet'] : tags);
  const s = (tags) => (allowTesting ? [...tags, 'scope:devnet'] : tags);
  return {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: [
      {
        // type:devnet here for apps/devnet; the other apps are held off by scope:app below.
        sourceTag: 'type:app',
        onlyDependOnLibsWithTags: t(['type:feature', 'type:data-access', 'type:domain', 'type:util', 'type:devnet']),
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
        onlyDependOnLibsWithTags: [
          'type:feature',
          'type:data-access',
          'type:domain',
          'type:util',
          'type:testing',
          'type:devnet',
        ],
      },
      {
        sourceTag: 'type:devnet',
        onlyDependOnLibsWithTags: t(['type:devnet', 'type:data-access', 'type:domain', 'type:util']),
      },
      { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: s(['scope:shared']) },
      { sourceTag: 'scope:chain', onlyDependOnLibsWithTags: s(['scope:chain', 'scope:shared']) },
      { sourceTag: 'scope:devnet', onlyDependOnLibsWithTags: ['scope:devnet', 'scope:chain', 'scope:shared'] },
      {
        sourceTag: 'scope:identity',
        onlyDependOnLibsWithTags: s(['scope:identity', 'scope:shared']),
        bannedExternalImports: allowTesting ? [] : ['@bsv/sdk'],
      },
      {
        sourceTag: 'scope:records',
        onlyDependOnLibsWithTags: s(['scope:records', 'scope:chain', 'scope:shared']),
        bannedExternalImports: allowTesting ? [] : ['@bsv/sdk'],
      },
      {
        sourceTag: 'scope:webhooks',
        onlyDependOnLibsWithTags: s(['scope:webhooks', 'scope:records', 'scope:chain', 'scope:shared']),
        bannedExternalImports: allowTesting ? [] : ['@bsv/sdk'],
      },
      {
        sourceTag: 'scope:app',
        onlyDependOnLibsWithTags: s([
          'scope:app',
          'scope:records',
          'scope:identity',
          'scope:chain',
          'scope:webhooks',
          'scope:shared',
        ]),
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
    // Tests may use any package (e.g. @bsv/sdk as an independent verifier), the testing libs and the devnet;
    // so may the test helpers of an app or a lib (`src/testing/`: imported by its specs only).
    files: [
      '**/*.spec.ts',
      'libs/*/testing/**/*.ts',
      'apps/*/src/testing/**/*.ts',
      'libs/*/*/src/testing/**/*.ts',
      'bench/**/*.ts',
    ],
    rules: { 'no-console': 'off', '@nx/enforce-module-boundaries': ['error', boundaries(true)] },
  },
  {
    files: ['apps/cli/**/*.ts', 'apps/launcher/**/*.ts', 'bench/**/*.ts', 'tools/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
];
