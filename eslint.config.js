// Lint: correctness rules that review misses. Formatting belongs to Prettier (npm run lint runs both).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { builtinModules } from 'node:module';

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', '.venv/', 'dist/', '.build/', '.test-tmp/', 'test/replay/histories/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Forgetting to await an activity, a workflow API or a transaction is the bug these catch.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Tests, benches and scripts read loosely typed JSON answers; the application code may not.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The one place that touches the console: it hands what libraries print to the JSON logger
    // (logger.ts takeConsole), and its test. Everything else logs through pino.
    files: ['logger.ts', 'test/unit/logger-console.test.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: builtinModules.flatMap((m) => [m, `node:${m}`]) }],
    },
  },
);
