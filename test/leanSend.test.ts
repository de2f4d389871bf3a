import { randomUUID } from 'node:crypto';
import { DeleteTableCommand, GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newRequestCost } from '../src/db/capacity.js';
import { costed, createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { endpoint } from './support/harness.js';

/**
 * Low-level commands sent through `costed` take their class's middleware chain, resolved once
 * (src/db/leanSend.ts): every middleware of the client still runs, the SDK's retries and errors
 * included, and a middleware added later runs on every later call.
 */
describe('low-level commands with their middleware resolved once per class', () => {
  let dynamo: Dynamo;
  let tableName: string;
  const key = { PK: { S: 'LEAN#1' }, SK: { S: 'A' } };

  beforeAll(async () => {
    tableName = `t-${randomUUID()}`;
    dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
    await ensureTable(dynamo.client, tableName, endpoint());
    await dynamo.client.send(new PutItemCommand({ TableName: tableName, Item: { ...key, name: { S: 'lean' } } }));
  });

  afterAll(async () => {
    await dynamo?.client.send(new DeleteTableCommand({ TableName: tableName }));
    dynamo?.client.destroy();
  });

  const get = () => new GetItemCommand({ TableName: tableName, Key: key });

  it('resolves the middleware of a class once, and answers and counts each call as the SDK does', async () => {
    const cost = newRequestCost();
    const client = costed(dynamo.doc, cost);
    const resolve = vi.spyOn(GetItemCommand.prototype, 'resolveMiddleware');
    try {
      const answers = await Promise.all([client.send(get()), client.send(get()), client.send(get())]);
      const again = await client.send(get());
      for (const answer of [...answers, again]) {
        expect((answer as { Item?: unknown }).Item).toEqual({ ...key, name: { S: 'lean' } });
      }
      // The first call resolves the chain; the others take it (the SDK would resolve it four times).
      expect(resolve.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      resolve.mockRestore();
    }
    // The capacity middleware ran on each: DynamoDB reported capacity for every call.
    expect(cost.requests).toBe(4);
    expect(cost.readCapacityUnits).toBeGreaterThan(0);
    // A document client's command takes the SDK's own path (its middleware is per instance).
    const fromDocument = await client.send(new GetCommand({ TableName: tableName, Key: { PK: 'LEAN#1', SK: 'A' } }));
    expect((fromDocument as { Item?: unknown }).Item).toEqual({ PK: 'LEAN#1', SK: 'A', name: 'lean' });
  });

  it('runs a middleware added after the chain was resolved, and the SDK retries a throttled call', async () => {
    const client = costed(dynamo.doc, newRequestCost());
    await client.send(get());
    let throttles = 1;
    const seen: string[] = [];
    dynamo.client.middlewareStack.add(
      (next, context) => async (args) => {
        seen.push(context.commandName ?? '');
        if (context.commandName === 'GetItemCommand' && throttles > 0) {
          throttles -= 1;
          const error = Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
            name: 'ThrottlingException',
            $metadata: { httpStatusCode: 400 },
            $fault: 'client',
          });
          throw error;
        }
        return next(args);
      },
      // Below the retry step: each attempt passes here.
      { step: 'finalizeRequest', name: 'testLeanThrottle' },
    );
    try {
      const answer = await client.send(get());
      expect((answer as { Item?: unknown }).Item).toEqual({ ...key, name: { S: 'lean' } });
      // The throttled attempt and its retry.
      expect(seen.filter((name) => name === 'GetItemCommand')).toHaveLength(2);
    } finally {
      dynamo.client.middlewareStack.remove('testLeanThrottle');
    }
    // Removed: the next call no longer passes there.
    await client.send(get());
    expect(seen.filter((name) => name === 'GetItemCommand')).toHaveLength(2);
  });

  it("rejects with the SDK's error for a failed call", async () => {
    const client = costed(dynamo.doc, newRequestCost());
    const missing = new QueryCommand({
      TableName: `missing-${randomUUID()}`,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': { S: 'x' } },
    });
    await expect(client.send(missing)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });
});
