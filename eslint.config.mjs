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
      'no-console': 'off',
      // Validators reject control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests talk to JSON answers of every shape; `any` keeps assertions readable there.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
