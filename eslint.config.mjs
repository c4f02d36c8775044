// A small rule set: typescript-eslint's recommended rules (no type information, so it stays
// quick), plus a few that catch real mistakes in this code base.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    // Every error code is made by a named factory of the one error module (docs/api.md, Error codes).
    files: ['src/**/*.ts'],
    ignores: ['src/domain/shared/errors.ts'],
    rules: {
      'no-restricted-syntax': ['error', { selector: "NewExpression[callee.name='ApiError']", message: 'Make errors with a named factory of src/domain/shared/errors.ts.' }],
    },
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
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
