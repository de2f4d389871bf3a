/**
 * The one generator of shop data: deterministic (a fixed pseudo-random seed), so the same call
 * always gives the same shop.
 *
 * - `demoData()`: the demo shop a fresh start seeds: alice has 30 orders spread over seven
 *   months, bob 4, and 15 named products sit in 4 categories; alice reviewed 5 of them, bob 3.
 *   A review is a verified purchase where its author has an order of the product that was not
 *   cancelled.
 * - `demoData(size)`: a generated shop of any size (the benchmark's data set): `users` users with
 *   `ordersMin`..`ordersMax` orders each, `categories` x `productsPerCategory` products with
 *   realistic text sizes and deep stock, and `buyers` users without orders; the first
 *   REVIEWED_PER_CATEGORY products of each category have up to REVIEWS_PER_PRODUCT reviews.
 */
import { pick, pickDistinct, seededRandom } from './seededRandom.js';
import { noStatusCounts } from '../table/codecs.js';
import { reviewIdOf } from '../table/entities/review.js';
import type { OrderModel, OrderStatus, ProductModel, ReviewModel, UserModel } from '../table/models.js';

export interface DemoData {
  users: UserModel[];
  products: ProductModel[];
  orders: OrderModel[];
  reviews: ReviewModel[];
}

/** How big a generated shop is, and the seed it is drawn from. */
export interface DataSize {
  seed: number;
  users: number;
  ordersMin: number;
  ordersMax: number;
  categories: number;
  productsPerCategory: number;
  /** Users without orders (the benchmark's placeOrder writes only to them). */
  buyers: number;
}

export interface GeneratedData extends DemoData {
  buyers: UserModel[];
  categories: string[];
}

/** How a run of one user's orders is spread in time and through the statuses. */
export interface OrderPlan {
  /** When the order `age` places from the newest (1) was placed; may draw from `random`. */
  placedMs(age: number, random: () => number): number;
  orderId(index: number): string;
  /** The newest orders up to this age are PLACED, then SHIPPED up to the second; older ones DELIVERED or CANCELLED. */
  statusAges: [placed: number, shipped: number];
  cancelledShare: number;
  /** How long after placing an order that moved on was last changed. */
  changedAfterMs: number;
  /** The version of an order that moved on. */
  changedVersion: number;
}

/**
 * `count` orders of `userId`, oldest first, each of 1-3 distinct products with 1-3 of each.
 * The draws per order come in a fixed sequence (time, line count, products, quantities, status).
 */
export function generateOrders(
  userId: string,
  count: number,
  random: () => number,
  products: readonly ProductModel[],
  plan: OrderPlan,
): OrderModel[] {
  const orders: OrderModel[] = [];
  for (let i = 0; i < count; i++) {
    const age = count - i;
    const placedMs = plan.placedMs(age, random);
    const placedAt = new Date(placedMs).toISOString();
    const items = pickDistinct(random, products, 1 + Math.floor(random() * 3)).map((product) => ({
      productId: product.productId,
      productName: product.name,
      unitPriceCents: product.priceCents,
      quantity: 1 + Math.floor(random() * 3),
    }));
    const [placedUpTo, shippedUpTo] = plan.statusAges;
    const status: OrderStatus =
      age <= placedUpTo
        ? 'PLACED'
        : age <= shippedUpTo
          ? 'SHIPPED'
          : random() < plan.cancelledShare
            ? 'CANCELLED'
            : 'DELIVERED';
    orders.push({
      kind: 'Order',
      orderId: plan.orderId(i),
      userId,
      status,
      placedAt,
      updatedAt: status === 'PLACED' ? placedAt : new Date(placedMs + plan.changedAfterMs).toISOString(),
      items,
      totalCents: items.reduce((sum, line) => sum + line.unitPriceCents * line.quantity, 0),
      version: status === 'PLACED' ? 1 : plan.changedVersion,
    });
  }
  return orders;
}

/** Whether `userId` has an order of `productId` that was not cancelled: a review's verifiedPurchase. */
const bought = (orders: readonly OrderModel[], userId: string, productId: string): boolean =>
  orders.some(
    (order) =>
      order.userId === userId &&
      order.status !== 'CANCELLED' &&
      order.items.some((line) => line.productId === productId),
  );

/** A review by `author` of `productId`, written at `at`, its verifiedPurchase from `orders`. */
export function reviewOf(
  author: UserModel,
  productId: string,
  text: { rating: number; title: string; body: string },
  at: string,
  orders: readonly OrderModel[],
): ReviewModel {
  return {
    kind: 'Review',
    reviewId: reviewIdOf(productId, author.userId),
    productId,
    authorId: author.userId,
    ...text,
    authorName: author.name,
    verifiedPurchase: bought(orders, author.userId, productId),
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
}

// --- the demo shop ---------------------------------------------------------------------------

const CATALOG: [productId: string, name: string, category: string, priceCents: number, description: string][] = [
  ['headphones-x1', 'Noise-Cancelling Headphones', 'electronics', 8999, 'Over-ear, 30 hours of battery.'],
  ['keyboard-k2', 'Mechanical Keyboard', 'electronics', 12950, 'Tenkeyless, hot-swappable switches.'],
  ['mouse-m3', 'Wireless Mouse', 'electronics', 2999, 'Silent clicks, USB-C charging.'],
  ['monitor-27', '27" 4K Monitor', 'electronics', 34900, 'IPS panel, 60 Hz, USB-C with 65 W power delivery.'],
  ['charger-65', 'USB-C Charger 65W', 'electronics', 3499, 'GaN, two ports.'],
  ['book-ddia', 'Designing Data-Intensive Applications', 'books', 4599, 'The book on distributed data systems.'],
  ['book-dynamo', 'The DynamoDB Book', 'books', 7900, 'Single-table design, from the basics to advanced patterns.'],
  ['book-graphql', 'Production Ready GraphQL', 'books', 3900, 'Designing and running GraphQL APIs.'],
  ['book-sre', 'Site Reliability Engineering', 'books', 4250, 'How Google runs production systems.'],
  ['kettle-gooseneck', 'Gooseneck Kettle', 'kitchen', 5900, 'Temperature control to the degree.'],
  ['grinder-burr', 'Burr Coffee Grinder', 'kitchen', 14900, '40 grind settings.'],
  ['pan-cast-iron', 'Cast Iron Pan', 'kitchen', 3450, '26 cm, pre-seasoned.'],
  ['tent-2p', 'Two-Person Tent', 'outdoors', 19900, '1.9 kg, three seasons.'],
  ['lamp-head', 'Head Lamp', 'outdoors', 2450, '400 lumens, rechargeable.'],
  ['bottle-steel', 'Steel Water Bottle', 'outdoors', 1999, '750 ml, keeps cold for 24 hours.'],
];

const DEMO_CREATED_AT = '2026-04-01T08:00:00.000Z';
const FIRST_ORDER_AT = Date.parse('2026-05-01T09:00:00.000Z');
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const demoUser = (userId: string, name: string, orderCount: number): UserModel => ({
  kind: 'User',
  userId,
  email: `${userId}@example.com`,
  name,
  createdAt: DEMO_CREATED_AT,
  updatedAt: DEMO_CREATED_AT,
  orderCount,
  statusCounts: null,
  version: 1,
});

/** One demo order every `spacingDays` from FIRST_ORDER_AT, at a random hour of the morning. */
const demoPlan = (user: UserModel, count: number, spacingDays: number): OrderPlan => ({
  placedMs: (age, random) =>
    FIRST_ORDER_AT + (count - age) * spacingDays * DAY_MS + Math.floor(random() * 10 * HOUR_MS),
  orderId: (index) => `demo-${user.userId}-${String(index + 1).padStart(3, '0')}`,
  statusAges: [3, 6],
  cancelledShare: 0.12,
  changedAfterMs: 2 * DAY_MS,
  changedVersion: 1,
});

function demoShop(): DemoData {
  const random = seededRandom(20260401);
  const products: ProductModel[] = CATALOG.map(([productId, name, category, priceCents, description]) => ({
    kind: 'Product',
    productId,
    name,
    description,
    category,
    priceCents,
    stock: 50 + Math.floor(random() * 150),
    soldCount: 0,
    createdAt: DEMO_CREATED_AT,
    updatedAt: DEMO_CREATED_AT,
    version: 1,
  }));
  const alice = demoUser('alice', 'Alice Example', 30);
  const bob = demoUser('bob', 'Bob Example', 4);
  const orders = [
    ...generateOrders(alice.userId, 30, random, products, demoPlan(alice, 30, 7)),
    ...generateOrders(bob.userId, 4, random, products, demoPlan(bob, 4, 45)),
  ];
  const users = [alice, bob].map((u) => ({ ...u, statusCounts: countByStatus(orders, u.userId) }));
  const reviewed = (author: UserModel, day: number, productId: string, rating: number, title: string, body: string) =>
    reviewOf(author, productId, { rating, title, body }, new Date(FIRST_ORDER_AT + day * DAY_MS).toISOString(), orders);
  const reviews = [
    reviewed(alice, 20, 'headphones-x1', 5, 'Quiet at last', 'The noise cancelling is excellent on trains.'),
    reviewed(
      alice,
      41,
      'book-dynamo',
      5,
      'The single-table book',
      'Read it twice; the key design chapters alone are worth it.',
    ),
    reviewed(
      alice,
      63,
      'kettle-gooseneck',
      4,
      'Precise pour',
      'Holds the temperature well. The lid is a little loose.',
    ),
    reviewed(alice, 90, 'mouse-m3', 3, 'Fine, not great', 'Silent indeed, but the scroll wheel feels vague.'),
    reviewed(alice, 150, 'tent-2p', 4, 'Light and quick to pitch', 'Two of us fit with room for the packs.'),
    reviewed(bob, 50, 'headphones-x1', 4, 'Comfortable', 'I wear them all day; the case is bulky.'),
    reviewed(bob, 95, 'book-dynamo', 2, 'Too deep for me', ''),
    reviewed(bob, 140, 'lamp-head', 5, 'Bright', '400 lumens is plenty, and it charges over USB-C.'),
  ];
  return { users, products, orders, reviews };
}

function countByStatus(orders: readonly OrderModel[], userId: string): Record<OrderStatus, number> {
  const counts = noStatusCounts();
  for (const order of orders) if (order.userId === userId) counts[order.status] += 1;
  return counts;
}

// --- a generated shop of any size ------------------------------------------------------------

const WORDS =
  'solid compact wireless durable premium classic ergonomic quiet portable smart steel cotton bamboo ceramic modular foldable insulated rechargeable waterproof lightweight'.split(
    ' ',
  );
const NOUNS =
  'lamp kettle backpack speaker notebook jacket blender tent mug charger router chair desk pan bottle'.split(' ');

const GENERATED_CREATED_AT = '2025-01-01T08:00:00.000Z';
/** The newest generated order is placed before this instant. */
export const GENERATED_NOW_MS = Date.parse('2026-06-01T12:00:00.000Z');
export const MINUTE_MS = 60_000;

/** A user of a generated shop. */
export function generatedUser(userId: string, orderCount: number): UserModel {
  return {
    kind: 'User',
    userId,
    email: `${userId}@bench.example.com`,
    name: `Bench User ${userId.slice(-4)}`,
    createdAt: GENERATED_CREATED_AT,
    updatedAt: GENERATED_CREATED_AT,
    orderCount,
    // Generated shops read no per-status counts; the writes add them as orders come.
    statusCounts: null,
    version: 1,
  };
}

/** Orders of a generated shop: the newest `spacingMs` before GENERATED_NOW_MS, then one every `spacingMs`, less a random half. */
export const generatedPlan = (userId: string, spacingMs: number): OrderPlan => ({
  placedMs: (age, random) => GENERATED_NOW_MS - age * spacingMs - Math.floor(random() * (spacingMs / 2)),
  orderId: (index) => `${userId}-o${String(index + 1).padStart(6, '0')}`,
  statusAges: [2, 5],
  cancelledShare: 0.1,
  changedAfterMs: 36 * 3_600_000,
  changedVersion: 2,
});

function generatedShop(size: DataSize): GeneratedData {
  const random = seededRandom(size.seed);
  const categories = Array.from({ length: size.categories }, (_, i) => `cat-${String(i + 1).padStart(2, '0')}`);
  const products: ProductModel[] = [];
  for (const category of categories) {
    for (let i = 0; i < size.productsPerCategory; i++) {
      const name = `${pick(random, WORDS)} ${pick(random, WORDS)} ${pick(random, NOUNS)} ${i + 1}`;
      const sentences = 1 + Math.floor(random() * 4);
      const description = Array.from(
        { length: sentences },
        () =>
          `A ${pick(random, WORDS)}, ${pick(random, WORDS)} ${pick(random, NOUNS)} for every day; ${pick(random, WORDS)} and ${pick(random, WORDS)}.`,
      ).join(' ');
      products.push({
        kind: 'Product',
        productId: `${category}-p${String(i + 1).padStart(4, '0')}`,
        name: name.charAt(0).toUpperCase() + name.slice(1),
        description,
        category,
        priceCents: 199 + Math.floor(random() * 50_000),
        stock: 900_000 + Math.floor(random() * 100_000),
        soldCount: 0,
        createdAt: GENERATED_CREATED_AT,
        updatedAt: GENERATED_CREATED_AT,
        version: 1,
      });
    }
  }
  const users: UserModel[] = [];
  const orders: OrderModel[] = [];
  for (let i = 0; i < size.users; i++) {
    const count = size.ordersMin + Math.floor(random() * (size.ordersMax - size.ordersMin + 1));
    const user = generatedUser(`bench-u${String(i + 1).padStart(5, '0')}`, count);
    users.push(user);
    orders.push(
      ...generateOrders(user.userId, count, random, products, generatedPlan(user.userId, 3 * 24 * 60 * MINUTE_MS)),
    );
  }
  const buyers = Array.from({ length: size.buyers }, (_, i) =>
    generatedUser(`bench-buyer${String(i + 1).padStart(3, '0')}`, 0),
  );
  const reviews = categories.flatMap((_, c) =>
    products
      .slice(c * size.productsPerCategory, c * size.productsPerCategory + REVIEWED_PER_CATEGORY)
      .flatMap((product) => generatedReviews(random, product, users, orders)),
  );
  return { users, buyers, products, categories, orders, reviews };
}

/** Products of each category of a generated shop that have reviews, and how many they have at most. */
export const REVIEWED_PER_CATEGORY = 2;
export const REVIEWS_PER_PRODUCT = 25;

/** Up to REVIEWS_PER_PRODUCT reviews of `product` by distinct users, an hour apart, 1-5 stars. */
function generatedReviews(
  random: () => number,
  product: ProductModel,
  users: readonly UserModel[],
  orders: readonly OrderModel[],
): ReviewModel[] {
  return pickDistinct(random, users, Math.min(REVIEWS_PER_PRODUCT, users.length)).map((author, i) =>
    reviewOf(
      author,
      product.productId,
      {
        rating: 1 + Math.floor(random() * 5),
        title: `${pick(random, WORDS)} ${pick(random, NOUNS)}`,
        body: Array.from(
          { length: 1 + Math.floor(random() * 3) },
          () => `${pick(random, WORDS)} and ${pick(random, WORDS)}.`,
        ).join(' '),
      },
      new Date(GENERATED_NOW_MS - (i + 1) * 3_600_000).toISOString(),
      orders,
    ),
  );
}

/** The demo shop, or with `size` a generated shop of that size (see the module comment). */
export function demoData(): DemoData;
export function demoData(size: DataSize): GeneratedData;
export function demoData(size?: DataSize): DemoData | GeneratedData {
  return size ? generatedShop(size) : demoShop();
}
