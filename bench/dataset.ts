/**
 * The benchmark's dataset: the generated shop of src/seed/demoData.ts at BenchConfig's size
 * (deterministic, seeded), plus one user (`bench-scale`) with `scaleOrders` orders for the scale
 * test, written with the project's own codecs (so items have exactly the server's layout) and
 * BatchWriteItem.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putItems } from '../src/db/batchWrite.js';
import {
  demoData,
  generatedPlan,
  generatedUser,
  generateOrders,
  GENERATED_NOW_MS,
  MINUTE_MS,
} from '../src/seed/demoData.js';
import type { GeneratedData } from '../src/seed/demoData.js';
import { seededRandom } from '../src/seed/seededRandom.js';
import { EntityType, orderToDetailsItem, orderToUserItem, productToItem, userToItem } from '../src/table/codecs.js';
import type { Item } from '../src/table/codecs.js';
import { reviewItems } from '../src/seed/seed.js';
import { emailGuardKey } from '../src/table/keys.js';
import type { UserModel } from '../src/table/models.js';
import type { BenchConfig } from './config.js';

/** The benchmark's data set: a generated shop of BenchConfig's size, and the scale test's user. */
export interface Dataset extends GeneratedData {
  scaleUser: UserModel | undefined;
}

export interface SeedReport {
  items: number;
  seconds: number;
  itemsPerSecond: number;
  /** Items by kind, for the report. */
  breakdown: Record<string, number>;
}

export const SCALE_USER_ID = 'bench-scale';

export function buildDataset(config: BenchConfig): Dataset {
  const scaleUser = config.scaleOrders > 0 ? generatedUser(SCALE_USER_ID, config.scaleOrders) : undefined;
  return { ...demoData(config), scaleUser };
}

const userItems = (u: UserModel): Item[] => [
  userToItem(u),
  { ...emailGuardKey(u.email), entityType: EntityType.EmailGuard, userId: u.userId },
];

/** Writes `items` in `streams` parallel BatchWriteItem streams (DynamoDB Local takes ~1,000-1,400 items/s). */
async function writeAll(doc: DynamoDBDocumentClient, tableName: string, items: Item[], streams = 2): Promise<void> {
  const per = Math.ceil(items.length / streams);
  await Promise.all(
    Array.from({ length: streams }, (_, s) => putItems(doc, tableName, items.slice(s * per, (s + 1) * per))),
  );
}

/** Writes the dataset; the scale partition's orders are generated and written in slices to bound memory. */
export async function seedDataset(
  doc: DynamoDBDocumentClient,
  tableName: string,
  data: Dataset,
  config: BenchConfig,
  progress: (message: string) => void,
): Promise<SeedReport> {
  const started = performance.now();
  const breakdown: Record<string, number> = {};
  const count = (kind: string, n: number) => {
    breakdown[kind] = (breakdown[kind] ?? 0) + n;
  };
  const base: Item[] = [
    ...[...data.users, ...data.buyers].flatMap(userItems),
    ...data.products.map(productToItem),
    ...data.orders.flatMap((order) => [orderToDetailsItem(order), orderToUserItem(order)]),
    ...reviewItems(data.reviews),
  ];
  count('user profiles + email guards', (data.users.length + data.buyers.length) * 2);
  count('reviews (details + product-partition copy) + ratings', reviewItems(data.reviews).length);
  count('products', data.products.length);
  count('orders (details + user-partition copy)', data.orders.length * 2);
  await writeAll(doc, tableName, base);
  progress(`  base dataset: ${base.length} items in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  if (data.scaleUser) {
    const scaleStarted = performance.now();
    await writeAll(doc, tableName, userItems(data.scaleUser));
    count('user profiles + email guards', 2);
    const random = seededRandom(config.seed + 1);
    const slice = 5000;
    for (let done = 0; done < config.scaleOrders; done += slice) {
      const n = Math.min(slice, config.scaleOrders - done);
      // One order a minute, oldest first; ids continue across slices.
      const plan = generatedPlan(SCALE_USER_ID, MINUTE_MS);
      const orders = generateOrders(SCALE_USER_ID, n, random, data.products, plan).map((order, i) => ({
        ...order,
        orderId: `${SCALE_USER_ID}-o${String(done + i + 1).padStart(6, '0')}`,
        placedAt: new Date(GENERATED_NOW_MS - (config.scaleOrders - done - i) * MINUTE_MS).toISOString(),
        updatedAt: new Date(GENERATED_NOW_MS - (config.scaleOrders - done - i) * MINUTE_MS).toISOString(),
      }));
      const items = orders.flatMap((order) =>
        config.scaleDetails ? [orderToUserItem(order), orderToDetailsItem(order)] : [orderToUserItem(order)],
      );
      await writeAll(doc, tableName, items);
      count(config.scaleDetails ? 'scale orders (both copies)' : 'scale orders (user-partition copy)', items.length);
      progress(
        `  scale partition: ${done + n}/${config.scaleOrders} orders (${((performance.now() - scaleStarted) / 1000).toFixed(1)} s)`,
      );
    }
  }
  const items = Object.values(breakdown).reduce((a, b) => a + b, 0);
  const seconds = (performance.now() - started) / 1000;
  return { items, seconds, itemsPerSecond: items / seconds, breakdown };
}
