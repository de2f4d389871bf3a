// @ts-check
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import tseslint from 'typescript-eslint';

/**
 * The layers, lowest first. A module may import its own layer and the layers listed before it,
 * never one after it: table -> db -> writes -> GraphQL (graphql, resolvers, pipeline) ->
 * runtime -> transports -> main (migrations and seed sit beside writes, above db). scripts/, bench/ and test/ sit outside the layers and may use any of them.
 * @type {[layer: string, patterns: string[]][]} */
const LAYERS = [
  [
    'shared',
    ['src/config/**', 'src/errors.ts', 'src/logger.ts', 'src/money.ts', 'src/projectRoot.ts', 'src/shutdown.ts'],
  ],
  ['telemetry', ['src/telemetry/**']],
  ['table', ['src/table/**']],
  ['events', ['src/events/**']],
  ['db', ['src/db/**']],
  ['writes', ['src/writes/**']],
  ['seed', ['src/seed/**']],
  ['migrations', ['src/migrations/**']],
  ['streams', ['src/streams/**']],
  ['auth', ['src/auth/**']],
  ['graphql', ['src/graphql/**', 'src/generated/**']],
  ['resolvers', ['resolvers/**']],
  ['pipeline', ['src/pipeline/**']],
  // The composition root: built by main.ts, the tests and the GraphQL Lambda, handed to the transports.
  ['runtime', ['src/runtime.ts', 'src/runtimeConsumer.ts']],
  ['transports', ['src/transports/**', 'src/lambda/**']],
  ['main', ['src/main.ts', 'src/consumer/**']],
];
const layerPolicies = LAYERS.map(([type], index) => ({
  from: { file: { categories: type } },
  allow: {
    to: {
      file: {
        categories: {
          anyOf: LAYERS.slice(0, index + 1).map(([below]) => below),
        },
      },
    },
  },
}));

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'src/generated/',
      'client/generated/',
      'examples/storefront/src/gql/',
      'examples/relay/src/__generated__/',
      '.data/',
      'test/artifacts/',
      'bench/results/',
      'cdk.out/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['src/**/*.ts', 'src/**/*.tsx', 'resolvers/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'import/resolver': { typescript: { project: './tsconfig.json' } },
      // Layers classify files (not folders): the shared modules and main.ts are single files.
      'boundaries/files': LAYERS.flatMap(([category, patterns]) => patterns.map((pattern) => ({ category, pattern }))),
    },
    rules: {
      // External packages are not layers: only our own modules are checked.
      'boundaries/dependencies': ['error', { default: 'disallow', policies: layerPolicies }],
      // Every module of src/ and resolvers/ belongs to a layer.
      'boundaries/no-unknown-files': 'error',
    },
  },
  {
    // Tests read GraphQL responses as untyped JSON on purpose: they assert the wire format.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
