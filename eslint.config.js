import js from '@eslint/js'
import tseslint from 'typescript-eslint'

// The use cases built on the engine, and the commands on them.
const USE_CASES = ['install', 'tenant', 'teardown', 'fix', 'doctor', 'commands'].flatMap((d) => [
  `**/${d}/*`,
  `**/${d}/**`,
])

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '**/*.tmp.ts',
      'scratch/**',
      'oclif.manifest.json',
      'test/e2e/kube/**',
      'reports/**',
      '.stryker-tmp*/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  { files: ['bin/**', 'scripts/**', 'bench/**', 'test/**'], rules: { 'no-console': 'off' } },
  // bin/ is CommonJS (bin/package.json): the entry skips Node's ES module loader.
  {
    files: ['bin/**/*.js', 'bench/**/*.cjs', '.dependency-cruiser.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', __dirname: 'readonly', module: 'writable' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Layers only look down: the engine (src/plan) never imports a use case, and what reads and judges
  // (context, facts, checks, spec) never imports the engine; shared names and finders live below both.
  {
    files: ['src/plan/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: USE_CASES, message: 'src/plan is the engine: it must not import a use case' }],
        },
      ],
    },
  },
  {
    files: ['src/context/**/*.ts', 'src/facts/**/*.ts', 'src/checks/**/*.ts', 'src/desired/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [...USE_CASES, '**/plan/*', '**/plan/**'],
              message: 'reading and judging code must not import the engine (src/plan) or a use case',
            },
          ],
        },
      ],
    },
  },
)
