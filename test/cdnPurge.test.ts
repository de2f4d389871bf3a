/**
 * The CDN purge hook (CDN_PURGE_URL) against a real HTTP receiver on loopback: the purger batches
 * the public tags, retries a failed POST a bounded number of times and never waits in `purge`;
 * a standalone consumer POSTs the tags of a change made straight with the SDK.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDynamo } from '../src/db/client.js';
import type { Dynamo } from '../src/db/client.js';
import { ensureTable } from '../src/db/ensureTable.js';
import { Registry } from 'prom-client';
import { loadConsumerConfig } from '../src/config/index.js';
import { CdnPurger, cdnPurgerFrom } from '../src/streams/cdnPurge.js';
import { registerCdnPurgeMetrics } from '../src/streams/cdnPurgeMetrics.js';
import { productKey } from '../src/table/keys.js';
import { ChildServers } from './support/childServers.js';
import { aProduct, store } from './support/factories.js';
import { endpoint } from './support/harness.js';

interface Receiver {
  url: string;
  posts: { tags: string[] }[];
  /** The headers of each POST, in order. */
  headers: http.IncomingHttpHeaders[];
  /** Status of each next POST (200 once the list is used up). */
  statuses: number[];
  /** Resolves at the next POST answered 2xx. */
  nextPurge(): Promise<{ tags: string[] }>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const posts: { tags: string[] }[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const statuses: number[] = [];
  const waiters: ((post: { tags: string[] }) => void)[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const status = statuses.shift() ?? 200;
      const post = JSON.parse(body) as { tags: string[] };
      posts.push(post);
      headers.push(req.headers);
      res.writeHead(status).end();
      if (status < 300) for (const waiter of waiters.splice(0)) waiter(post);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/purge`,
    posts,
    headers,
    statuses,
    nextPurge: () => new Promise((resolve) => waiters.push(resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const log = { warn: () => undefined, debug: () => undefined };
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterEach(() => {
  receiver.posts.length = 0;
  receiver.headers.length = 0;
  receiver.statuses.length = 0;
});
afterAll(async () => {
  await receiver?.close();
});

describe('the CDN purger', () => {
  it('sends the public tags of several changes in one POST, without the private ones', async () => {
    const purger = new CdnPurger({ url: receiver.url, log, batchMs: 50 });
    purger.purge(['product:p1', 'user:u1', 'category:books']);
    purger.purge(['product:p1', 'user-orders:u1', 'product:p2']);
    await purger.drain();
    expect(receiver.posts).toEqual([{ tags: ['product:p1', 'category:books', 'product:p2'] }]);
    expect(purger.stats).toMatchObject({ posts: 1, purgedTags: 3, lostTags: 0 });
  });

  it('splits a large set into POSTs of at most maxTagsPerPost tags', async () => {
    const purger = new CdnPurger({ url: receiver.url, log, maxTagsPerPost: 2 });
    purger.purge(['product:a', 'product:b', 'product:c', 'product:d', 'product:e']);
    await purger.drain();
    expect(receiver.posts.map((post) => post.tags.length)).toEqual([2, 2, 1]);
  });

  it('retries a refused POST until it is taken', async () => {
    receiver.statuses.push(503, 500);
    const purger = new CdnPurger({ url: receiver.url, log, retryDelayMs: 10 });
    purger.purge(['category:books']);
    await purger.drain();
    expect(receiver.posts).toHaveLength(3);
    expect(purger.stats).toMatchObject({ posts: 1, failedAttempts: 2, lostTags: 0 });
  });

  it('gives up after maxAttempts and counts the tags lost', async () => {
    receiver.statuses.push(500, 500, 500, 500);
    const purger = new CdnPurger({ url: receiver.url, log, retryDelayMs: 10, maxAttempts: 3 });
    purger.purge(['category:books', 'product:p1']);
    await purger.drain();
    expect(receiver.posts).toHaveLength(3);
    expect(purger.stats).toMatchObject({ posts: 0, failedAttempts: 3, lostTags: 2 });
  });

  it('gives up on an unreachable receiver within its bound, and purge never waits for it', async () => {
    const closed = await startReceiver();
    await closed.close();
    const purger = new CdnPurger({ url: closed.url, log, retryDelayMs: 10, maxAttempts: 3 });
    const started = performance.now();
    for (let i = 0; i < 1000; i++) purger.purge([`product:p${i}`]);
    expect(performance.now() - started).toBeLessThan(200);
    await purger.drain();
    expect(purger.stats).toMatchObject({ posts: 0, failedAttempts: 6, lostTags: 1000 });
  });

  it('sends the headers of CDN_PURGE_HEADERS with every POST: the purge API credentials', async () => {
    const { cdnPurgeUrl, cdnPurgeHeaders } = loadConsumerConfig({
      CDN_PURGE_URL: receiver.url,
      CDN_PURGE_HEADERS: 'Authorization=Bearer%20purge-token,Fastly-Key=key-1',
    });
    const purger = cdnPurgerFrom({ cdnPurgeUrl, cdnPurgeHeaders }, log);
    purger?.purge(['product:a']);
    await purger?.drain();
    expect(receiver.headers).toEqual([
      expect.objectContaining({
        authorization: 'Bearer purge-token',
        'fastly-key': 'key-1',
        'content-type': 'application/json',
      }),
    ]);
  });

  it('shows what it purged and what it lost in /metrics', async () => {
    receiver.statuses.push(500, 500);
    const registry = new Registry();
    const purger = new CdnPurger({ url: receiver.url, log, retryDelayMs: 10, maxAttempts: 2 });
    registerCdnPurgeMetrics(registry, purger);
    purger.purge(['product:lost-1', 'product:lost-2']);
    await purger.drain();
    purger.purge(['product:kept']);
    await purger.drain();
    const text = await registry.metrics();
    expect(text).toContain('tablegraph_cdn_purge_tags_total{outcome="lost"} 2');
    expect(text).toContain('tablegraph_cdn_purge_tags_total{outcome="purged"} 1');
    expect(text).toContain('tablegraph_cdn_purge_posts_total{outcome="failed"} 2');
    expect(text).toContain('tablegraph_cdn_purge_queued_tags 0');
  });

  it('bounds its queue', async () => {
    const purger = new CdnPurger({ url: receiver.url, log, maxQueuedTags: 3 });
    purger.purge(['product:a', 'product:b', 'product:c', 'product:d']);
    await purger.drain();
    expect(purger.stats).toMatchObject({ purgedTags: 3, lostTags: 1 });
  });
});

describe('the consumer with CDN_PURGE_URL', () => {
  const children = new ChildServers();
  const product = aProduct({ category: `purge-${randomUUID().slice(0, 8)}` });
  let dynamo: Dynamo;
  let tableName: string;

  beforeAll(async () => {
    tableName = `cdn-purge-${randomUUID()}`;
    dynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
    await ensureTable(dynamo.client, tableName, endpoint());
    await store(dynamo.doc, tableName, { products: [product] });
  }, 60_000);

  afterAll(async () => {
    await children.killAll();
    await dynamo?.client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
    dynamo?.client.destroy();
  });

  it('POSTs the public tags of a change made straight with the SDK', async () => {
    await children.startConsumer(endpoint(), tableName, { CDN_PURGE_URL: receiver.url, STREAM_POLL_MS: '50' });
    const purged = (async () => {
      for (;;) {
        const post = await receiver.nextPurge();
        if (post.tags.includes(`product:${product.productId}`)) return post;
      }
    })();
    await dynamo.doc.send(
      new UpdateCommand({
        TableName: tableName,
        Key: productKey(product.productId),
        UpdateExpression: 'SET stock = :s',
        ExpressionAttributeValues: { ':s': 4242 },
      }),
    );
    const post = await purged;
    expect(post.tags).toContain(`category:${product.category}`);
    expect(post.tags.every((tag) => !tag.startsWith('user:') && !tag.startsWith('orders:'))).toBe(true);
  }, 60_000);
});
