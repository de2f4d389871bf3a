import { createRequire } from 'node:module';
import { configDefaults, defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/** Starts one DynamoDB Local for a project's run; every test file gets its own table in it. */
const DYNAMODB_LOCAL = ['test/support/globalSetup.ts'];

/**
 * The differential suite: graphql-js as the oracle of the shipped (planned) executor, on 10,000
 * generated documents and 1,000 generated mutations, and on every request of these integration
 * test files, whose servers then answer with the planned executor and check each answer against
 * graphql-js replaying the same DynamoDB calls (test/support/differentialExecutor.ts, plugged in
 * by test/support/harness.ts). Any difference fails the test during which it was found
 * (test/support/differentialTally.ts), whatever that test asserts.
 */
const DIFFERENTIAL = [
  'test/executors.generated.test.ts',
  'test/batching.test.ts',
  'test/catalogBrowse.test.ts',
  'test/catalogFilters.test.ts',
  'test/itemCollection.test.ts',
  'test/lookaheadDirectives.test.ts',
  'test/mutations.test.ts',
  'test/operations.test.ts',
  'test/pagination.test.ts',
  'test/pipeline.transports.test.ts',
  'test/readApi.test.ts',
  'test/reviews.test.ts',
  'test/security.authorization.test.ts',
  'test/security.budgets.test.ts',
  'test/shopOrders.test.ts',
];

/**
 * Four projects, run one after the other by `npm test`:
 * - unit (test/unit/): pure functions and generated-file drift, no Java, no browser, no network;
 * - int: every other test file, each against DynamoDB Local through a real server, with the
 *   executor the server ships with;
 * - differential: the shipped (planned) executor against graphql-js (DIFFERENTIAL above);
 * - e2e (test/e2e/): whole processes: start-up, faults, the browser, client tooling, deployment.
 */
export default defineConfig({
  resolve: {
    // One graphql for everything: Vite would pick graphql's index.mjs for our code while
    // CommonJS dependencies (graphql-armor) require index.js, and graphql refuses schema
    // objects from "another realm". Node itself (npm start) resolves index.js everywhere.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    env: { NODE_ENV: 'test', LOG_LEVEL: 'silent' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 10_000 } },
      {
        extends: true,
        test: {
          name: 'int',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**', 'test/e2e/**', 'test/executors.generated.test.ts'],
          globalSetup: DYNAMODB_LOCAL,
        },
      },
      {
        extends: true,
        test: {
          name: 'differential',
          include: DIFFERENTIAL,
          globalSetup: DYNAMODB_LOCAL,
          setupFiles: ['test/support/differentialTally.ts'],
          provide: { differential: true },
        },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], globalSetup: DYNAMODB_LOCAL },
      },
      // `npm run soak` only (minutes long): never part of `npm test`.
      {
        extends: true,
        test: { name: 'soak', include: ['test/soak/**/*.soak.ts'], globalSetup: DYNAMODB_LOCAL, testTimeout: 420_000 },
      },
    ],
  },
});
