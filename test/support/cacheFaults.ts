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
 */
import { TransactWriteCommand, UpdateCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Dynamo } from '../../src/db/client.js';
import { invalidationPurpose } from '../../src/events/invalidationBus.js';
import { invalidationChannels } from '../../src/events/invalidationPartitions.js';
import { openEnvelope, Sealer } from '../../src/events/signedEnvelope.js';
import { productKey } from '../../src/table/keys.js';
import type { ChildServer, ChildServers } from './childServers.js';
import { aProduct, store } from './factories.js';
import { tokenFor } from './harness.js';
import { postGraphQL } from './load.js';
import type { RedisChannels } from '../../src/events/redisChannels.js';
import { rawChannels } from './testRedis.js';
import type { TestRedis } from './testRedis.js';
import { STOCK_QUERY } from './staleReads.js';
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

const READ_INTERVAL_MS = 40;

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
    await this.captureHeartbeats();
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
  private async captureHeartbeats(): Promise<void> {
    const capture = await rawChannels(this.options.redis);
    const channels = invalidationChannels(this.options.tableName);
    for (const channel of channels) {
      capture.listen(channel, {
        message: (raw) => {
          const opened = openEnvelope(raw, { purpose: 'invalidation', secret: undefined, maxBytes: 1_000_000 });
          if (opened.ok && opened.body.includes('"kind":"heartbeat"')) this.heartbeats.set(channel, raw);
        },
      });
    }
    this.capture = capture;
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
        await this.watch(run, value);
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
        const stopForging = await this.forgeHeartbeats(run);
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

  /**
   * Publishes on each invalidation channel, every 100 ms until stopped, ten each of: the
   * heartbeat captured there as it was (a replay), partition 0's captured heartbeat (a replay on
   * another channel), its body re-sealed fresh and unsigned under the consumer's name, and signed
   * with a guessed key.
   */
  private async forgeHeartbeats(run: FaultRun): Promise<() => Promise<void>> {
    const channels = invalidationChannels(this.options.tableName);
    const first = this.heartbeats.get(channels[0] ?? '') as Buffer;
    const opened = openEnvelope(first, { purpose: 'invalidation', secret: undefined, maxBytes: 1_000_000 });
    if (!opened.ok) throw new Error('no heartbeat to forge from');
    const unsigned = new Sealer(invalidationPurpose(this.options.tableName, 0), undefined, opened.from);
    const guessed = new Sealer(
      invalidationPurpose(this.options.tableName, 0),
      'a-guessed-secret-of-at-least-32-characters',
      opened.from,
    );
    const publisher = await rawChannels(this.options.redis);
    const timer = setInterval(() => {
      for (let i = 0; i < 10; i++) {
        for (const channel of channels) {
          const own = this.heartbeats.get(channel) as Buffer;
          const forged = [own.toString(), first.toString(), unsigned.seal(opened.body), guessed.seal(opened.body)];
          for (const message of forged) {
            run.forgedHeartbeats++;
            void publisher.publish(channel, message).catch(() => undefined);
          }
        }
      }
    }, 100);
    return async () => {
      clearInterval(timer);
      await publisher.close();
    };
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

  /** The stock `api` shows: the lower of the point read and the category page. */
  private async stockOn(run: FaultRun, api: ChildServer): Promise<number | undefined> {
    const variables = { productId: this.product.productId, category: this.product.category };
    const result = await postGraphQL(api.url, this.admin, STOCK_QUERY, variables);
    run.reads++;
    const data = result.body?.data as
      { product: { stock: number }; products: { nodes: { productId: string; stock: number }[] } } | undefined;
    if (!data) return undefined;
    const listed = data.products.nodes.find((node) => node.productId === this.product.productId)?.stock;
    return Math.min(data.product.stock, listed ?? -1);
  }

  /**
   * Reads every instance until it shows `value`: the lags (to the end of the read that showed it).
   * What counts against the bound is a read BEGUN past it that showed an older value, or one
   * showing an older value again after: a read begun in time that this process gets the answer
   * of late (a busy machine stalls the test's own event loop, and every instance's lag with it)
   * shows nothing stale.
   */
  private async watch(run: FaultRun, value: number): Promise<void> {
    const acknowledged = performance.now();
    const giveUpMs = this.boundMs + 15_000;
    await Promise.all(
      this.apis.map(async (api) => {
        for (;;) {
          const begun = performance.now() - acknowledged;
          const shown = await this.stockOn(run, api);
          const lag = performance.now() - acknowledged;
          if (shown !== undefined && shown >= value) {
            run.lagsMs.push(lag);
            const again = await this.stockOn(run, api);
            if (again !== undefined && again < value) run.beyondBound++;
            return;
          }
          if (shown !== undefined && begun > this.boundMs) {
            // Begun past the bound, and still older: stale.
            run.lagsMs.push(lag);
            run.beyondBound++;
            return;
          }
          if (lag > giveUpMs) {
            run.lagsMs.push(lag);
            run.beyondBound++;
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, READ_INTERVAL_MS));
        }
      }),
    );
  }
}
