/**
 * The stale-read checker of the response cache across instances (the e2e test runs a few dozen
 * writes, `npm run soak:cache` a thousand): each write sets a product's stock to a new,
 * ever larger value, alternately through the API (updateProduct on one instance) and straight
 * with the SDK (no API involved). After each write every instance is read until it shows the
 * new value (its eviction observed: the lag), then read again: a read that starts after the
 * eviction was observed and still shows an older value is stale.
 *
 * How long the eviction takes is a number to print, not to assert: it is the stream's and
 * Redis's trip, which a loaded machine stretches at will. What is asserted is the bound the
 * cache promises: an instance serves from its cache only while its feed proves it current as
 * of at most the feed timeout ago, so a read begun later than that after a write was
 * acknowledged shows the write, however loaded the machine (`overdue` counts those that did not).
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { FEED_TIMEOUT_MS } from '../../src/pipeline/responseCache/responseCache.js';
import { productKey } from '../../src/table/keys.js';
import { percentile, postGraphQL } from './load.js';
import { waitUntil } from './waitUntil.js';

export const STOCK_QUERY = `query Stock($productId: ID!, $category: String!) {
  product(productId: $productId) { stock }
  products(category: $category, first: 20) { nodes { productId stock } }
}`;

export interface StaleCheckOptions {
  urls: readonly string[];
  doc: DynamoDBDocumentClient;
  tableName: string;
  productId: string;
  category: string;
  admin: string;
  writes: number;
  /** Reads after the eviction was observed, per instance and write. */
  readsAfter?: number;
  /** Longest wait for one instance to show one write. */
  timeoutMs?: number;
  /** Told each lag as it is measured (a soak keeps them all for one distribution). */
  onLag?: (viaApi: boolean, ms: number) => void;
}

export interface LagSummary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface StaleCheckReport {
  writes: number;
  reads: number;
  /** Reads begun after the eviction was observed that showed an older value. */
  stale: number;
  /** Reads begun more than the feed timeout after the write was acknowledged that showed an older value. */
  overdue: number;
  /** Answers served from the cache (`extensions.cache.status` hit) among all reads. */
  hits: number;
  /** ms from the write's acknowledgement to each instance showing it. */
  apiLag: LagSummary;
  sdkLag: LagSummary;
}

export const summarize = (values: readonly number[]): LagSummary => ({
  n: values.length,
  p50: Math.round(percentile(values, 50)),
  p90: Math.round(percentile(values, 90)),
  p99: Math.round(percentile(values, 99)),
  max: Math.round(Math.max(0, ...values)),
});

export async function checkStaleReads(options: StaleCheckOptions): Promise<StaleCheckReport> {
  const { urls, doc, tableName, productId, category, admin, writes } = options;
  const readsAfter = options.readsAfter ?? 2;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const variables = { productId, category };
  let reads = 0;
  let hits = 0;
  let stale = 0;
  let overdue = 0;
  const apiLags: number[] = [];
  const sdkLags: number[] = [];
  const key = productKey(productId);

  const stockOn = async (url: string): Promise<number> => {
    const result = await postGraphQL(url, admin, STOCK_QUERY, variables);
    reads++;
    const body = result.body as
      | {
          data?: { product: { stock: number }; products: { nodes: { productId: string; stock: number }[] } };
          extensions?: { cost?: { dynamodb?: { requests?: number } } };
        }
      | undefined;
    if (!body?.data) throw new Error(`read failed: ${result.outcome} ${JSON.stringify(result.body ?? result.failure)}`);
    if (body.extensions?.cost?.dynamodb?.requests === 0) hits++;
    const listed = body.data.products.nodes.find((node) => node.productId === productId)?.stock;
    // Both halves must show the write: the point read and the index page.
    return Math.min(body.data.product.stock, listed ?? -1);
  };

  for (let i = 0; i < writes; i++) {
    const current = (await doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item as
      { stock: number; version: number } | undefined;
    if (!current) throw new Error('the product is gone');
    const value = current.stock + 1;
    const viaApi = i % 2 === 0;
    if (viaApi) {
      const result = await postGraphQL(
        urls[i % urls.length] as string,
        admin,
        `mutation Restock($productId: ID!, $v: Int!, $stock: Int!) {
          updateProduct(input: { productId: $productId, expectedVersion: $v, stock: $stock }) { userErrors { code } }
        }`,
        { productId, v: current.version, stock: value },
      );
      const errors = (result.body?.data as { updateProduct?: { userErrors: unknown[] } } | undefined)?.updateProduct
        ?.userErrors;
      if (!errors || errors.length > 0) throw new Error(`updateProduct failed: ${JSON.stringify(result.body)}`);
    } else {
      await doc.send(
        new UpdateCommand({
          TableName: tableName,
          Key: key,
          UpdateExpression: 'SET stock = :s, version = version + :one',
          ExpressionAttributeValues: { ':s': value, ':one': 1 },
        }),
      );
    }
    const acknowledged = performance.now();
    await Promise.all(
      urls.map(async (url) => {
        await waitUntil(
          async () => {
            const begun = performance.now();
            if ((await stockOn(url)) >= value) return true;
            if (begun - acknowledged > FEED_TIMEOUT_MS) overdue++;
            return false;
          },
          {
            timeoutMs,
            intervalMs: 5,
            what: `${url} to show stock ${value}`,
          },
        );
        const lag = performance.now() - acknowledged;
        (viaApi ? apiLags : sdkLags).push(lag);
        options.onLag?.(viaApi, lag);
        for (let j = 0; j < readsAfter; j++) if ((await stockOn(url)) < value) stale++;
      }),
    );
  }
  return { writes, reads, stale, overdue, hits, apiLag: summarize(apiLags), sdkLag: summarize(sdkLags) };
}

/**
 * With the instances' feed already cut (a consumer killed, the stream Lambda no longer invoked),
 * writes `stock` straight to the table, which no instance hears of, and waits until each of
 * `instances` bypasses its cache (`status` is its `extensions.cache.status`); how long each took.
 */
export async function bypassAfterUnheardWrite<I>(options: {
  doc: DynamoDBDocumentClient;
  tableName: string;
  productId: string;
  stock: number;
  instances: readonly I[];
  status: (instance: I) => Promise<string | undefined>;
  timeoutMs: number;
  what: string;
}): Promise<number[]> {
  const { doc, tableName, productId, stock, instances, status, timeoutMs, what } = options;
  // A change no instance hears of: they must stop serving what they hold.
  await doc.send(
    new UpdateCommand({
      TableName: tableName,
      Key: productKey(productId),
      UpdateExpression: 'SET stock = :s',
      ExpressionAttributeValues: { ':s': stock },
    }),
  );
  const cut = performance.now();
  return Promise.all(
    instances.map(async (instance) => {
      await waitUntil(async () => (await status(instance)) === 'bypass', { timeoutMs, intervalMs: 50, what });
      return performance.now() - cut;
    }),
  );
}
