/**
 * The response cache under faults, on real processes: three API instances on Redis, one
 * redis-server or a cluster of three primaries (the shared tier on, everything signed with
 * REDIS_SIGNING_SECRET), one standalone consumer, DynamoDB Local.
 * Each write raises a product's stock (straight with the SDK, or through an instance's
 * `updateProduct`); every instance is then read until it shows the new value: the lag. An
 * instance still showing an older value more than RESPONSE_CACHE_MAX_AGE + 1 s after the write
 * served a stale answer past the bound the maximum age promises.
 *
 * The faults (`run`), each set up before its writes and cleared after them:
 * - `lost-invalidation`: the consumer (faultyConsumer.ts) never publishes half of its
 *   invalidations, and keeps beating;
 * - `bad-tag`: each write also writes an item under a key outside the API's id rules in the same
 *   transaction (the same stream batch), as an import or a console edit would;
 * - `forged-heartbeat`: the consumer stops; heartbeats keep coming from someone else on every
 *   invalidation channel: a captured real one replayed (on its own channel, and partition 0's on
 *   the others), the same re-sealed unsigned, and signed with a guessed key;
 * - `redis-outage`: redis-server (every node of the cluster) is killed, and started again after
 *   the writes;
 * - `hung-redis`: redis-server (every node) is stopped (SIGSTOP), and continued after the writes.
 * The `npm run soak:cache` soak and the CI test (test/responseCache.faults.test.ts) both use it.
 * The heartbeats captured and forged are cacheFaultForgery.ts; the reads that tell a stale answer,
 * cacheFaultWatch.ts.
 */
import { TransactWriteCommand, UpdateCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Dynamo } from '../../src/db/client.js';
import { invalidationChannels } from '../../src/events/invalidationPartitions.js';
import { productKey } from '../../src/table/keys.js';
import type { ChildServer, ChildServers } from './childServers.js';
import { captureHeartbeats, forgeHeartbeats } from './cacheFaultForgery.js';
import { watchInstances } from './cacheFaultWatch.js';
import { aProduct, store } from './factories.js';
import { tokenFor } from './harness.js';
import { postGraphQL } from './load.js';
import { STOCK_QUERY } from './staleReads.js';
import type { RedisChannels } from '../../src/events/redisChannels.js';
import type { TestRedis } from './testRedis.js';
import { waitUntil } from './waitUntil.js';

export const FAULTS = ['lost-invalidation', 'bad-tag', 'forged-heartbeat', 'redis-outage', 'hung-redis'] as const;
export type Fault = (typeof FAULTS)[number] | 'none';

export const FAULT_RIG_SECRET = 'the-signing-secret-of-the-cache-fault-rig-0123456789';

export interface FaultRigOptions {
  endpoint: string;
  tableName: string;
  dynamo: Dynamo;
  children: ChildServers;
  redis: TestRedis;
  maxAgeSeconds: number;
  seed: number;
}

/** What one run of writes under one fault saw. */
export interface FaultRun {
  fault: Fault;
  sdkWrites: number;
  apiWrites: number;
  reads: number;
  /** ms from each write's acknowledgement to each instance showing it. */
  lagsMs: number[];
  /** Instances still showing an older value past the bound (RESPONSE_CACHE_MAX_AGE + 1 s), or again after showing it. */
  beyondBound: number;
  /** ms each `updateProduct` took, as its client saw it. */
  mutationMs: number[];
  /** Heartbeats forged or replayed during the run. */
  forgedHeartbeats: number;
}

export class CacheFaultRig {
  apis: ChildServer[] = [];
  private consumer: ChildServer | undefined;
  private capture: RedisChannels | undefined;
  /** The last real heartbeat seen on each invalidation channel, as it was sent. */
  private readonly heartbeats = new Map<string, Buffer>();
  private stock = 0;
  private imports = 0;
  private readonly product = aProduct({ category: 'faults', stock: 0 });
  private admin = '';

  private constructor(private readonly options: FaultRigOptions) {}

  get boundMs(): number {
    return this.options.maxAgeSeconds * 1000 + 1000;
  }

  static async start(options: FaultRigOptions): Promise<CacheFaultRig> {
    const rig = new CacheFaultRig(options);
    await rig.setUp();
    return rig;
  }

  private get redisEnv(): Record<string, string> {
    return { ...this.options.redis.env, REDIS_SIGNING_SECRET: FAULT_RIG_SECRET };
  }

  private async setUp(): Promise<void> {
    const { dynamo, tableName, children, endpoint, maxAgeSeconds } = this.options;
    await store(dynamo.doc, tableName, { products: [this.product] });
    this.admin = `Bearer ${await tokenFor('cache-faults', 'admin')}`;
    await this.startConsumer();
    const env = {
      ...this.redisEnv,
      STREAM_CONSUMER: 'false',
      NODE_ENV: 'development',
      RESPONSE_CACHE_SHARED: 'on',
      RESPONSE_CACHE_MAX_AGE: String(maxAgeSeconds),
    };
    this.apis = await Promise.all([0, 1, 2].map(() => children.start(endpoint, tableName, env)));
    await this.listenForHeartbeats();
    await this.allLive();
  }

  async stop(): Promise<void> {
    await this.capture?.close();
  }

  private async startConsumer(faults?: object): Promise<void> {
    const { children, endpoint, tableName } = this.options;
    const env = { ...this.redisEnv, STREAM_POLL_MS: '50', ...(faults ? { SOAK_FAULTS: JSON.stringify(faults) } : {}) };
    this.consumer = faults
      ? await children.startConsumer(endpoint, tableName, env, 'test/support/faultyConsumer.ts')
      : await children.startConsumer(endpoint, tableName, env);
  }

  private async stopConsumer(): Promise<void> {
    if (this.consumer) await this.options.children.stop(this.consumer);
    this.consumer = undefined;
  }

  /** Keeps the last real heartbeat on each invalidation channel, as an attacker who can SUBSCRIBE would. */
  private async listenForHeartbeats(): Promise<void> {
    const channels = invalidationChannels(this.options.tableName);
    this.capture = await captureHeartbeats(this.options.redis, this.options.tableName, this.heartbeats);
    await waitUntil(() => this.heartbeats.size === channels.length, {
      timeoutMs: 15_000,
      what: 'a heartbeat captured on each channel',
    });
  }

  /** `extensions.cache.status` of the stock query on `api`. */
  async cacheStatus(api: ChildServer): Promise<string | undefined> {
    return (await this.explain(api)).status;
  }

  /** `extensions.cache` of the stock query on `api`. */
  async explain(api: ChildServer): Promise<{ status?: string; age?: number }> {
    const response = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: this.admin },
      body: JSON.stringify({
        query: STOCK_QUERY,
        variables: { productId: this.product.productId, category: this.product.category },
        extensions: { cache: true },
      }),
    });
    const body = (await response.json()) as { extensions?: { cache?: { status?: string; age?: number } } };
    return body.extensions?.cache ?? {};
  }

  /** Waits until every instance serves from its cache again (its feed is live). */
  async allLive(timeoutMs = 30_000): Promise<void> {
    for (const api of this.apis) {
      await waitUntil(async () => (await this.cacheStatus(api)) !== 'bypass', {
        timeoutMs,
        intervalMs: 100,
        what: 'a live invalidation feed',
      });
    }
  }

  /**
   * Runs `sdkWrites` direct writes and `apiWrites` mutations (spread among them) under `fault`;
   * `during` runs after the writes, before the fault is cleared.
   */
  async run(fault: Fault, sdkWrites: number, apiWrites = 0, during?: () => Promise<void>): Promise<FaultRun> {
    const run: FaultRun = {
      fault,
      sdkWrites,
      apiWrites,
      reads: 0,
      lagsMs: [],
      beyondBound: 0,
      mutationMs: [],
      forgedHeartbeats: 0,
    };
    const clear = await this.inject(fault, run);
    try {
      const total = sdkWrites + apiWrites;
      for (let i = 0; i < total; i++) {
        // The mutations spread evenly among the direct writes.
        const viaApi = apiWrites > 0 && Math.floor(((i + 1) * apiWrites) / total) > Math.floor((i * apiWrites) / total);
        const value = viaApi ? await this.mutate(run, i) : await this.write(fault === 'bad-tag');
        await watchInstances(this.apis, this.admin, this.product, this.boundMs, run, value);
      }
      await during?.();
    } finally {
      await clear();
    }
    return run;
  }

  /** Sets `fault` up; returns what clears it (the instances are live again when it resolves). */
  private async inject(fault: Fault, run: FaultRun): Promise<() => Promise<void>> {
    const { redis, seed } = this.options;
    switch (fault) {
      case 'none':
      case 'bad-tag':
        return async () => undefined;
      case 'lost-invalidation':
        await this.stopConsumer();
        await this.startConsumer({ seed, loseInvalidations: 0.5 });
        await this.allLive();
        return async () => {
          await this.stopConsumer();
          await this.startConsumer();
          await this.allLive();
        };
      case 'forged-heartbeat': {
        await this.stopConsumer();
        const stopForging = await forgeHeartbeats(this.options.redis, this.options.tableName, this.heartbeats, run);
        return async () => {
          await stopForging();
          await this.startConsumer();
          await this.allLive();
        };
      }
      case 'redis-outage':
        await redis.kill();
        return async () => {
          await redis.restart();
          await this.allLive();
        };
      case 'hung-redis':
        redis.pause();
        return async () => {
          redis.resume();
          await this.allLive();
        };
    }
  }

  /** A direct SDK write of a higher stock (with an item outside the id rules in the same transaction); its value. */
  private async write(badTag: boolean): Promise<number> {
    const { dynamo, tableName } = this.options;
    const value = ++this.stock;
    const update = {
      TableName: tableName,
      Key: productKey(this.product.productId),
      UpdateExpression: 'SET stock = :s, version = version + :one',
      ExpressionAttributeValues: { ':s': value, ':one': 1 },
    };
    if (!badTag) await dynamo.doc.send(new UpdateCommand(update));
    else {
      const id = `sku.import-${++this.imports}`;
      await dynamo.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: update },
            {
              Put: {
                TableName: tableName,
                Item: { PK: `PRODUCT#${id}`, SK: 'DETAILS', entityType: 'Product', productId: id, name: id, stock: 1 },
              },
            },
          ],
        }),
      );
    }
    return value;
  }

  /** `updateProduct` of a higher stock on one of the instances; its value. */
  private async mutate(run: FaultRun, i: number): Promise<number> {
    const { dynamo, tableName } = this.options;
    const key = productKey(this.product.productId);
    const current = (await dynamo.doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true })))
      .Item as { version: number };
    const value = ++this.stock;
    const result = await postGraphQL(
      (this.apis[i % this.apis.length] as ChildServer).url,
      this.admin,
      `mutation Restock($productId: ID!, $v: Int!, $stock: Int!) {
        updateProduct(input: { productId: $productId, expectedVersion: $v, stock: $stock }) { userErrors { code } }
      }`,
      { productId: this.product.productId, v: current.version, stock: value },
    );
    const errors = (result.body?.data as { updateProduct?: { userErrors: unknown[] } } | undefined)?.updateProduct
      ?.userErrors;
    if (!errors || errors.length > 0) throw new Error(`updateProduct failed: ${JSON.stringify(result.body)}`);
    run.mutationMs.push(result.ms);
    return value;
  }
}
