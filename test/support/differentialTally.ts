/**
 * The differential suite's setup file: a test during which the oracle found any difference
 * fails, whatever else it asserts; after each test file, what the oracle compared in it, by
 * operation type (the suite's coverage of queries, mutations and subscription events, printed).
 */
import { afterAll, afterEach, expect } from 'vitest';
import { compared, differences } from './differentialExecutor.js';

afterEach(() => {
  const found = differences.splice(0);
  expect(found, 'the executor under test and graphql-js answered differently').toEqual([]);
});

afterAll(() => {
  const { query, mutation, subscription } = compared;
  if (query + mutation + subscription === 0) return;
  console.info(`differential: compared ${query} queries, ${mutation} mutations, ${subscription} subscription events`);
});
