/**
 * How fast a shard's lease changes hands, on DynamoDB Local (src/streams/shardLeases.ts,
 * src/streams/consumer.ts stop()):
 * - a consumer that reads a lease due to expire before its next beat looks again just after the
 *   expiry (driven heartbeats of one consumer, timers of the other);
 * - a consumer stopped with SIGTERM while its batch is held up (a soldCount transaction slowed
 *   down in that process only) releases its lease after one renewal period, without waiting for
 *   the batch: the standby takes the shard and applies the order while the stopping one's
 *   transaction is still held, and that transaction, refused by the fence, applies nothing
 *   (child processes, as `npm run consumer` runs).
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { LeaseStore } from '../src/streams/leases.js';
import { ShardLeases } from '../src/streams/shardLeases.js';
import { productKey } from '../src/table/keys.js';
import { ChildServers } from './support/childServers.js';
import { anOrder, aProduct, aUser, store } from './support/factories.js';
import type { FaultRule } from './support/faults.js';
import { endpoint } from './support/harness.js';
import { waitUntil } from './support/waitUntil.js';
import { getItem } from './support/writes.js';

const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
const tableName = `failover-${randomUUID()}`;
const children = new ChildServers();

beforeAll(async () => {
  await ensureTable(dynamo.client, tableName, endpoint());
});
afterAll(async () => {
  await children.killAll();
  await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  dynamo.client.destroy();
});

interface Logged {
  msg: string;
  fields: Record<string, unknown>;
}
const recorder = (into: Logged[]) => {
  const log = (fields: object, msg?: string) =>
    void into.push({ msg: msg ?? '', fields: fields as Record<string, unknown> });
  return { debug: log, info: log, warn: log, error: log };
};

describe('a standby', () => {
  it('looks at a lease again just after it expires, not at its next beat', async () => {
    const TTL = 3000; // renewal period 1 s
    const consumerName = `g${randomUUID().slice(0, 8)}`;
    const shards = [{ info: { shardId: `shardId-${consumerName}` }, finished: false }];
    const storeOf = (owner: string) => new LeaseStore({ doc: dynamo.doc, tableName, consumerName, owner, ttlMs: TTL });
    const leasesOf = (owner: string, logged: Logged[]) =>
      new ShardLeases(storeOf(owner), TTL, recorder(logged), () => undefined);
    const holder = leasesOf('host:1:holder', []);
    await holder.maintain(shards); // takes the lease, then never renews it (a paused holder)
    expect(holder.count).toBe(1);
    const [record] = await storeOf('x').list();
    const expiresAt = record!.expiresAt;
    // Its announcement outlives the lease: only the lease's expiry frees the shard (a holder
    // that stops announcing itself is taken over as soon as its announcement expires).
    await storeOf('host:1:holder').announce(expiresAt);

    // The standby's beats fall half a period off the expiry: the beat before it reads the lease
    // due within a period, and the beat after it would come 500 ms after the expiry.
    const logged: Logged[] = [];
    const standby = leasesOf('host:2:standby', logged);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - TTL + 500 - Date.now())));
    standby.start(() => shards);
    try {
      await waitUntil(() => standby.count === 1, { timeoutMs: 5_000, what: 'the standby to take the lease' });
    } finally {
      await standby.stop();
    }
    const rounds = logged.filter((line) => line.msg === 'stream lease round').map((line) => line.fields);
    const taking = rounds.find((round) =>
      (round.takes as { outcome: string }[]).some((take) => take.outcome === 'taken'),
    );
    expect(taking).toMatchObject({ why: 'expiry' });
    const [take] = taking!.takes as { sentAt: number }[];
    // Never before the expiry (the lease was the holder's until then).
    expect(take!.sentAt).toBeGreaterThan(expiresAt);
    // Every regular beat before it read the lease held.
    const before = rounds.slice(0, rounds.indexOf(taking!));
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((round) => (round.takes as unknown[]).length === 0)).toBe(true);
  });
});

describe('a consumer stopped with SIGTERM while its batch is held up', () => {
  it('hands the shard over after one renewal period, and the batch is applied once, by the standby', async () => {
    const LEASE_TTL_MS = 1500; // renewal period 500 ms
    const HELD_MS = 3000;
    const user = aUser();
    const product = aProduct({ stock: 100 });
    await store(dynamo.doc, tableName, { users: [user], products: [product] });
    const env = { LEASE_TTL_MS: String(LEASE_TTL_MS), STREAM_POLL_MS: '50', STREAM_CONSUMER_NAME: 'handover' };
    // Only the holder's soldCount transactions are slowed down.
    const slow: FaultRule[] = [
      {
        kind: 'latency',
        clients: ['dynamodb'],
        commands: ['TransactWriteItems'],
        touching: product.productId,
        ms: HELD_MS,
      },
    ];
    const holder = await children.startConsumer(
      endpoint(),
      tableName,
      { ...env, SOAK_FAULTS: JSON.stringify({ rules: slow }) },
      'test/support/faultyConsumer.ts',
    );
    await holder.node.waitForLog((line) => line.msg === 'stream shard lease taken', 'the holder taking the lease');
    const standby = await children.startConsumer(endpoint(), tableName, env);

    await store(dynamo.doc, tableName, { orders: [anOrder(user, [product])] });
    await holder.node.waitForLog(
      (line) => line.msg === 'fault injected' && line.command === 'TransactWriteItems',
      'the holder applying the order, held up',
    );
    const signalledAt = Date.now();
    holder.node.child.kill('SIGTERM');
    const taken = await standby.node.waitForLog(
      (line) => line.msg === 'stream shard lease taken',
      'the standby taking the lease',
    );
    const soldCount = async () =>
      Number((await getItem(dynamo.doc, tableName, productKey(product.productId)))?.soldCount ?? 0);
    await waitUntil(async () => (await soldCount()) === 1, {
      timeoutMs: 10_000,
      what: 'the standby to apply the order',
    });
    const exit = await holder.node.exited;
    expect(exit.code).toBe(0);

    const stopped = holder.node.logs.find((line) => line.msg === 'stream consumer stopped');
    const released = holder.node.logs.find((line) => line.msg === 'stream shard lease released');
    expect(stopped).toMatchObject({ drainedInTime: false });
    expect(released).toMatchObject({ released: true });
    // Released before the held transaction was answered, and taken while it was still held.
    expect(released!.time as number).toBeLessThan(signalledAt + HELD_MS);
    expect(taken.time as number).toBeLessThan(signalledAt + HELD_MS);
    // The holder's transaction went out after all, under a tenure that was over: refused.
    expect(await soldCount()).toBe(1);
  }, 30_000);
});
