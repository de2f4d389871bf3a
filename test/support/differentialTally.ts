/**
 * The differential suite's setup file: after each test file, what the oracle compared in it, by
 * operation type (the suite's coverage of queries, mutations and subscription events, printed).
 */
import { afterAll } from 'vitest';
import { compared } from './differentialExecutor.js';

afterAll(() => {
  const { query, mutation, subscription } = compared;
  if (query + mutation + subscription === 0) return;
  console.info(`differential: compared ${query} queries, ${mutation} mutations, ${subscription} subscription events`);
});
