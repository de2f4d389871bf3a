/**
 * Shard leases (src/streams/leases.ts) on DynamoDB Local: who may read a shard among consumers
 * that share a name. Time is passed in (`now`), so expiry is tested without waiting for it.
 * Plus what a consumer's heartbeat must name to vouch for a live cache feed, and the
 * configuration that switches the event bus to Redis (and its trust rule).
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadServerConfig } from '../src/config/index.js';
import { createDynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { LeaseCheck } from '../src/pipeline/responseCache/leaseCheck.js';
import { leaseRetryStrategy, LeaseStore, renewalPeriodMs } from '../src/streams/leases.js';
import { seededRandom } from '../src/seed/seededRandom.js';
import { Faults } from './support/faults.js';
import { streamLeaseKey } from '../src/table/keys.js';
import { endpoint } from './support/harness.js';
import { getItem } from './support/writes.js';

const TTL = 10_000;
const T0 = 1_800_000_000_000;
const dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
const tableName = `leases-${randomUUID()}`;
const leaseOf = (owner: string, consumerName = 'processor') =>
  new LeaseStore({ doc: dynamo.doc, tableName, consumerName, owner, ttlMs: TTL });
let shardNo = 0;
const aShard = () => `shardId-${Date.now()}-${++shardNo}`;

beforeAll(async () => {
  await ensureTable(dynamo.client, tableName, endpoint());
});
afterAll(async () => {
  await dynamo.client.send(new DeleteTableCommand({ TableName: tableName }));
  dynamo.client.destroy();
});

describe('a shard lease', () => {
  it('is taken by the first consumer and refused to a second while it lasts', async () => {
    const shard = aShard();
    expect(await leaseOf('a').acquire(shard, T0)).toEqual({ shardId: shard, owner: 'a', epoch: 1 });
    expect(await leaseOf('b').acquire(shard, T0 + TTL - 1)).toBeUndefined();
    const item = await getItem(dynamo.doc, tableName, streamLeaseKey('processor', shard));
    expect(item).toMatchObject({ owner: 'a', expiresAt: T0 + TTL, shardId: shard, epoch: 1 });
  });

  it('is kept alive by renewals, and taken over by another consumer once it expires', async () => {
    const shard = aShard();
    const a = leaseOf('a');
    const b = leaseOf('b');
    const tenure = (await a.acquire(shard, T0))!;
    expect(await a.renew(tenure, T0 + TTL - 100)).toBe(true);
    // Renewed: still a's after the first TTL would have run out.
    expect(await b.acquire(shard, T0 + TTL + 50)).toBeUndefined();
    expect(await b.acquire(shard, T0 + 2 * TTL)).toMatchObject({ owner: 'b', epoch: 2 });
    // The old holder learns it lost the shard from its next heartbeat.
    expect(await a.renew(tenure, T0 + 2 * TTL + 1)).toBe(false);
  });

  it('is free at once after its holder releases it, and a release by a non-holder changes nothing', async () => {
    const shard = aShard();
    const a = leaseOf('a');
    const b = leaseOf('b');
    const tenure = (await a.acquire(shard, T0))!;
    await b.release({ ...tenure, owner: 'b' });
    expect(await b.acquire(shard, T0 + 1)).toBeUndefined();
    await a.release(tenure);
    expect(await b.acquire(shard, T0 + 2)).toMatchObject({ owner: 'b' });
  });

  it('is retried on its own time scale when throttled: within a renewal period, not the SDK’s seconds', async () => {
    const ttlMs = 1500;
    const leaseDynamo = createDynamo({
      endpoint: endpoint(),
      region: 'us-east-1',
      overrides: { retryStrategy: leaseRetryStrategy(ttlMs) },
    });
    const faults = new Faults(seededRandom(1));
    faults.inject({ kind: 'throttle', commands: ['UpdateItem'], times: 2 });
    faults.attach(leaseDynamo.client, 'lease');
    try {
      const store = new LeaseStore({ doc: leaseDynamo.doc, tableName, consumerName: 'processor', owner: 'a', ttlMs });
      const { $metadata } = await leaseDynamo.doc.send(new UpdateCommand(store.acquireParams(aShard(), Date.now())));
      expect($metadata.attempts).toBe(3);
      // The SDK's default waits up to 1 s, then up to 2 s; these up to an eighth, then a quarter of the period.
      expect($metadata.totalRetryDelay).toBeLessThanOrEqual((renewalPeriodMs(ttlMs) * 3) / 8);
    } finally {
      leaseDynamo.client.destroy();
    }
  });

  it('belongs to its consumer name: another group leases the same shard independently', async () => {
    const shard = aShard();
    expect(await leaseOf('a', 'processor').acquire(shard, T0)).toBeDefined();
    expect(await leaseOf('b', 'archiver').acquire(shard, T0)).toBeDefined();
  });

  it('refuses a shard id that could address another item, before any request', () => {
    expect(() => leaseOf('a').acquireParams('shard#CONSUMER#x', T0)).toThrow('unexpected shard id');
  });
});

describe('a heartbeat naming a tenure', () => {
  const checkAt = (now: { t: number }) =>
    new LeaseCheck({ doc: dynamo.doc, tableName, recheckMs: 1000, now: () => now.t });

  it('vouches for a live feed only while the lease table shows that tenure, held by its sender', async () => {
    const shard = aShard();
    const now = { t: T0 + 1 };
    const a = leaseOf('a');
    const tenure = (await a.acquire(shard, T0))!;
    const check = checkAt(now);
    expect(await check.vouches('a', 'processor', [{ shardId: shard, epoch: tenure.epoch }])).toBe(true);
    // Someone else's name, another epoch, another consumer name: a forged heartbeat.
    expect(await checkAt(now).vouches('b', 'processor', [{ shardId: shard, epoch: tenure.epoch }])).toBe(false);
    expect(await checkAt(now).vouches('a', 'processor', [{ shardId: shard, epoch: tenure.epoch + 1 }])).toBe(false);
    expect(await checkAt(now).vouches('a', 'other', [{ shardId: shard, epoch: tenure.epoch }])).toBe(false);
    // Released (a clean stop): no longer, once the record is read again.
    await a.release(tenure);
    now.t += 1001;
    expect(await check.vouches('a', 'processor', [{ shardId: shard, epoch: tenure.epoch }])).toBe(false);
  });

  it('does not vouch past the lease’s expiry, and reads a lease at most once per recheck', async () => {
    const shard = aShard();
    const now = { t: T0 + 1 };
    const tenure = (await leaseOf('a').acquire(shard, T0))!;
    const check = checkAt(now);
    for (let i = 0; i < 5; i++)
      expect(await check.vouches('a', 'processor', [{ shardId: shard, epoch: tenure.epoch }])).toBe(true);
    expect(check.reads).toBe(1);
    // A consumer that died holding the lease: it expires.
    now.t = T0 + TTL + 1;
    expect(await check.vouches('a', 'processor', [{ shardId: shard, epoch: tenure.epoch }])).toBe(false);
  });
});

describe('REDIS_URL', () => {
  it.each(['redis://127.0.0.1:6379', 'rediss://user:secret@cache.example.com:6380/0'])('accepts %s', (url) => {
    expect(loadServerConfig({ REDIS_URL: url }).redisUrl).toBe(url);
  });

  it.each(['http://127.0.0.1:6379', '127.0.0.1:6379', 'redis:/x'])(
    'refuses %s with a message naming the form',
    (url) => {
      expect(() => loadServerConfig({ REDIS_URL: url })).toThrow(ConfigError);
      expect(() => loadServerConfig({ REDIS_URL: url })).toThrow('REDIS_URL must be a redis:// or rediss:// URL');
    },
  );

  it('is optional: without it the event bus stays in the process, fed by an in-process consumer', () => {
    expect(loadServerConfig({})).toMatchObject({ redisUrl: undefined, streamConsumer: true });
  });

  const PRODUCTION = {
    NODE_ENV: 'production',
    DYNAMODB_MODE: 'aws',
    CURSOR_SECRET: 'c'.repeat(40),
    JWT_SECRET: 'j'.repeat(40),
  };
  const URL = 'redis://127.0.0.1:6379';

  it('takes its signing secret as REDIS_SIGNING_SECRET, of at least 32 characters', () => {
    const secret = 's'.repeat(40);
    expect(loadServerConfig({ REDIS_URL: URL, REDIS_SIGNING_SECRET: secret }).redisSigningSecret).toBe(secret);
    expect(() => loadServerConfig({ REDIS_SIGNING_SECRET: 'short' })).toThrow(
      'REDIS_SIGNING_SECRET must be at least 32 characters',
    );
  });

  it('refuses to start in production on Redis without a signing secret, unless REDIS_TRUSTED says the network is the boundary', () => {
    expect(() => loadServerConfig({ ...PRODUCTION, REDIS_URL: URL })).toThrow(
      'REDIS_URL is set without REDIS_SIGNING_SECRET in production',
    );
    expect(
      loadServerConfig({ ...PRODUCTION, REDIS_URL: URL, REDIS_TRUSTED: 'true' }).redisSigningSecret,
    ).toBeUndefined();
    expect(loadServerConfig({ ...PRODUCTION, REDIS_URL: URL, REDIS_SIGNING_SECRET: 's'.repeat(32) })).toMatchObject({
      redisUrl: URL,
    });
    // Outside production, and without Redis, nothing is required.
    expect(loadServerConfig({ REDIS_URL: URL }).redisSigningSecret).toBeUndefined();
    expect(loadServerConfig(PRODUCTION).redisUrl).toBeUndefined();
  });

  it('turns the in-process consumer off unless STREAM_CONSUMER asks for it (each instance would publish every event)', () => {
    expect(loadServerConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).streamConsumer).toBe(false);
    expect(loadServerConfig({ REDIS_URL: 'redis://127.0.0.1:6379', STREAM_CONSUMER: 'true' }).streamConsumer).toBe(
      true,
    );
  });
});
