/**
 * How the cache fault rig (cacheFaults.ts) tells a stale answer: after each write, every instance
 * is read until it shows the new stock, the lag measured from the write's acknowledgement, and a
 * read begun past the bound (RESPONSE_CACHE_MAX_AGE + 1 s) that still shows an older value, or
 * one showing an older value again after the new one, counted against the bound.
 */
import type { ProductModel } from '../../src/table/models.js';
import type { ChildServer } from './childServers.js';
import { postGraphQL } from './load.js';
import { STOCK_QUERY } from './staleReads.js';

const READ_INTERVAL_MS = 40;

/** What the watch adds to a run's counts. */
export interface Watched {
  reads: number;
  /** ms from each write's acknowledgement to each instance showing it. */
  lagsMs: number[];
  /** Instances still showing an older value past the bound, or again after showing it. */
  beyondBound: number;
}

/** The stock `api` shows: the lower of the point read and the category page. */
async function stockOn(
  run: Watched,
  api: ChildServer,
  admin: string,
  product: ProductModel,
): Promise<number | undefined> {
  const variables = { productId: product.productId, category: product.category };
  const result = await postGraphQL(api.url, admin, STOCK_QUERY, variables);
  run.reads++;
  const data = result.body?.data as
    { product: { stock: number }; products: { nodes: { productId: string; stock: number }[] } } | undefined;
  if (!data) return undefined;
  const listed = data.products.nodes.find((node) => node.productId === product.productId)?.stock;
  return Math.min(data.product.stock, listed ?? -1);
}

/**
 * Reads every instance until it shows `value`: the lags (to the end of the read that showed it).
 * What counts against the bound is a read BEGUN past it that showed an older value, or one
 * showing an older value again after: a read begun in time that this process gets the answer
 * of late (a busy machine stalls the test's own event loop, and every instance's lag with it)
 * shows nothing stale.
 */
export async function watchInstances(
  apis: readonly ChildServer[],
  admin: string,
  product: ProductModel,
  boundMs: number,
  run: Watched,
  value: number,
): Promise<void> {
  const acknowledged = performance.now();
  const giveUpMs = boundMs + 15_000;
  await Promise.all(
    apis.map(async (api) => {
      for (;;) {
        const begun = performance.now() - acknowledged;
        const shown = await stockOn(run, api, admin, product);
        const lag = performance.now() - acknowledged;
        if (shown !== undefined && shown >= value) {
          run.lagsMs.push(lag);
          const again = await stockOn(run, api, admin, product);
          if (again !== undefined && again < value) run.beyondBound++;
          return;
        }
        if (shown !== undefined && begun > boundMs) {
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
