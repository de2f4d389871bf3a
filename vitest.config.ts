import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // One graphql for everything: Vite would pick graphql's index.mjs for our code while
    // CommonJS dependencies (graphql-armor) require index.js, and graphql refuses schema
    // objects from "another realm". Node itself (npm start) resolves index.js everywhere.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // One DynamoDB Local for the whole run; every test file gets its own table in it.
    globalSetup: ['test/support/globalSetup.ts'],
    env: { NODE_ENV: 'test', LOG_LEVEL: 'silent' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
