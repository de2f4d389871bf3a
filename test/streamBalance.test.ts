/**
 * Consumers sharing a name share the shards evenly (src/streams/shardLeases.ts), on DynamoDB
 * Local: within ±1 after two heartbeats, also when a consumer joins or leaves; a consumer that
 * stops hands its shards on at the others' next beat. The heartbeats are called one by one
 * (no timers), so a "round" is one beat of every consumer.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { LeaseStore } from '../src/streams/leases.js';
import { ShardLeases } from '../src/streams/shardLeases.js';
import { endpoint } from './support/harness.js';

const TTL = 60_000;
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
let dynamo: Dynamo;
let tableName: string;

beforeAll(async () => {
  dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  tableName = `balance-${randomUUID()}`;
  await ensureTable(dynamo.client, tableName, endpoint());
});
afterAll(async () => {
  await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  dynamo.client.destroy();
});

/** `count` shards of a group of its own, and consumers that join it. */
function group(count: number) {
  const consumerName = `g${randomUUID().slice(0, 8)}`;
  const shards = Array.from({ length: count }, (_, i) => ({
    info: { shardId: `shardId-${consumerName}-${i}` },
    finished: false,
  }));
  const consumers: ShardLeases[] = [];
  const join = () => {
    const owner = `host:1:${randomUUID().slice(0, 8)}`;
    const store = new LeaseStore({ doc: dynamo.doc, tableName, consumerName, owner, ttlMs: TTL });
    const consumer = new ShardLeases(store, TTL, silent, () => undefined);
    consumers.push(consumer);
    return consumer;
  };
  const round = async () => {
    for (const consumer of consumers) await consumer.maintain(shards);
  };
  /** Shards per running consumer as the table has them: what each may read. */
  const counts = async () => {
    const store = new LeaseStore({ doc: dynamo.doc, tableName, consumerName, owner: 'observer', ttlMs: TTL });
    const records = await store.list();
    const now = Date.now();
    return consumers.map(
      (consumer) => records.filter((record) => record.owner === consumer.owner && record.expiresAt > now).length,
    );
  };
  return { shards, consumers, join, round, counts };
}

const spread = (counts: number[]) => Math.max(...counts) - Math.min(...counts);

describe('shard balancing', () => {
  it.each([
    [3, 7],
    [4, 4],
    [3, 2],
    [2, 9],
  ])('shares %i consumers over %i shards within ±1 after two rounds, every shard held once', async (n, m) => {
    const g = group(m);
    for (let i = 0; i < n; i++) g.join();
    await g.round();
    await g.round();
    const counts = await g.counts();
    expect(spread(counts)).toBeLessThanOrEqual(1);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(m);
    // What each consumer believes it holds agrees with the table.
    expect(g.consumers.map((consumer) => consumer.count)).toEqual(counts);
  });

  it('rebalances within two rounds when a consumer joins', async () => {
    const g = group(8);
    g.join();
    g.join();
    await g.round();
    expect(await g.counts()).toEqual([4, 4]);
    g.join();
    await g.round();
    await g.round();
    const counts = await g.counts();
    expect(spread(counts)).toBeLessThanOrEqual(1);
    expect(g.consumers.map((consumer) => consumer.count)).toEqual(counts);
  });

  it('hands a stopping consumer’s shards to the others at their next beat', async () => {
    const g = group(6);
    g.join();
    g.join();
    g.join();
    await g.round();
    await g.round();
    const leaving = g.consumers.pop() as ShardLeases;
    await leaving.stop();
    await g.round();
    const counts = await g.counts();
    expect(counts).toEqual([3, 3]);
  });
});
