// @ts-check
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import tseslint from 'typescript-eslint';
import layersFile from './layers.json' with { type: 'json' };

/**
 * The layers of src/ and resolvers/ and what each may import: layers.json, the one list (npm run
 * docs writes it into docs/decisions/layers.md). A module imports its own layer and the layers
 * its entry names, nothing else. scripts/, bench/ and test/ sit outside the layers.
 */
const LAYERS = layersFile.layers;
const layerPolicies = LAYERS.map(({ name, imports }) => ({
  from: { file: { categories: name } },
  allow: { to: { file: { categories: { anyOf: [name, ...imports] } } } },
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
      'boundaries/files': LAYERS.flatMap(({ name, files }) => files.map((pattern) => ({ category: name, pattern }))),
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
