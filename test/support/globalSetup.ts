/** Starts one in-memory DynamoDB Local for the test run, on a free port. */
import type { TestProject } from 'vitest/node';
import { startLocalDynamo } from '../../src/db/local.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    /** The differential suite (vitest.config.ts): test servers run both executors and compare them. */
    differential: boolean;
  }
}

export default async function setup(project: TestProject) {
  const local = await startLocalDynamo();
  project.provide('dynamoEndpoint', local.endpoint);
  return async () => {
    await local.stop();
  };
}
