import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const TS_FILES = ['**/*.ts'];
const NODE_GLOBALS = [
  'process',
  'console',
  'URL',
  'Buffer',
  'setTimeout',
  'clearTimeout',
  'fetch',
  'performance',
];

export default tseslint.config(
  // plugin/.claude-plugin/types/: Claude Code writes its mod types there in an interactive --plugin-dir
  // session (the e2e tests run one); they are its, git-ignored by their own .gitignore.
  {
    ignores: [
      'plugin/dist/',
      'node_modules/',
      '.cache/',
      'coverage/',
      'plugin/.claude-plugin/types/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({ ...config, files: TS_FILES })),
  {
    files: TS_FILES,
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['server/src/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
  {
    // Tests read wire-format JSON whose shape is the thing under test.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-redundant-type-constituents': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(NODE_GLOBALS.map((name) => [name, 'readonly'])),
    },
  },
);
