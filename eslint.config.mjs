// A small rule set: typescript-eslint's recommended rules (no type information, so it stays
// quick), plus a few that catch real mistakes in this code base.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layering of the tree as import zones: each folder names the folders it must not import.
// Imports point inward (domain at the centre; protocols beside it; providers and the planes
// outside; infra adapters wired by the composition root), and the two planes never meet.
const layer = (...folders) => ({
  regex: `^(\\.\\./)+(${folders.join('|')})(/|$)`,
  message: `This folder does not import ${folders.join(', ')} (the layering: docs/README.md).`,
});
const packages = (...names) =>
  names.map((name) => ({
    group: [name, `${name}/*`],
    message: 'The domain knows no HTTP, GraphQL, Redis or SQL client: adapters live in src/infra or the planes.',
  }));
const importZones = [
  {
    files: ['src/domain/**/*.ts'],
    patterns: [
      layer('rest', 'graphql', 'protocols', 'providers', 'infra', 'cli', 'config', 'server', 'main'),
      ...packages('express', 'graphql', 'type-graphql', '@apollo', 'ioredis', 'pg', 'pg-boss', 'undici', 'pino', 'prom-client', '@aws-sdk'),
    ],
  },
  { files: ['src/protocols/**/*.ts'], patterns: [layer('rest', 'graphql', 'providers', 'infra', 'cli', 'config', 'server', 'main')] },
  { files: ['src/providers/**/*.ts'], patterns: [layer('rest', 'graphql', 'infra', 'cli', 'server', 'main')] },
  { files: ['src/rest/**/*.ts'], patterns: [layer('graphql', 'providers', 'infra', 'cli', 'server', 'main')] },
  { files: ['src/graphql/**/*.ts'], patterns: [layer('rest', 'protocols', 'providers', 'infra', 'cli', 'server', 'main')] },
  { files: ['src/infra/**/*.ts'], patterns: [layer('rest', 'graphql', 'cli', 'main')] },
].map(({ files, patterns }) => ({ files, rules: { 'no-restricted-imports': ['error', { patterns }] } }));

const namedErrorsOnly = {
  selector: "NewExpression[callee.name='ApiError']",
  message: 'Make errors with a named factory of src/domain/shared/errors.ts.',
};
const noRawSql = {
  selector: 'CallExpression[callee.property.name=/^(execute|getConnection|getKnex|raw)$/]',
  message: 'The domain runs no raw SQL: declare a port beside the service and implement it in src/infra/pg-*.ts.',
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.scratch/**', '.tollgate/**', 'dashboard/**', 'coverage/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // A variable a closure reads before its one assignment (a timer, an admission ticket) cannot be const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      'no-console': 'off',
      // Validators reject control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // Type-aware, for the two mistakes types catch and tests rarely do: a promise nobody awaits
    // or catches (its rejection crashes the process or is lost) and a promise where a callback
    // must return nothing (Express 4 style handlers, event listeners).
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  ...importZones,
  {
    // Every error code is made by a named factory of the one error module (docs/api.md, Error codes).
    files: ['src/**/*.ts'],
    ignores: ['src/domain/shared/errors.ts'],
    rules: { 'no-restricted-syntax': ['error', namedErrorsOnly] },
  },
  {
    // No raw SQL in the domain: it declares ports, the PostgreSQL adapters (src/infra/pg-*.ts) run
    // the statements (the zones above keep it from importing their helpers in src/infra/sql.ts).
    files: ['src/domain/**/*.ts'],
    ignores: ['src/domain/shared/errors.ts'],
    rules: { 'no-restricted-syntax': ['error', namedErrorsOnly, noRawSql] },
  },
  {
    // Tests talk to JSON answers of every shape; `any` keeps assertions readable there.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // The bench loads optional tools (inspector, perf_hooks) only when asked for them.
    files: ['bench/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The Node floor proxy (bench/node-floor.mjs): a plain ES module.
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: { process: 'readonly', Buffer: 'readonly', console: 'readonly' } },
  },
  {
    // Plain CommonJS helpers (the TypeScript require hook).
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly', console: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
