/**
 * The demo data set: deterministic (a fixed pseudo-random seed), so every fresh start shows
 * the same shop. alice has 30 orders spread over seven months, bob 4, and 15 products sit in
 * 4 categories.
 */
import { seededRandom } from './seededRandom.js';
import { noStatusCounts } from '../table/codecs.js';
import type { OrderModel, OrderStatus, ProductModel, UserModel } from '../table/models.js';

export interface DemoData {
  users: UserModel[];
  products: ProductModel[];
  orders: OrderModel[];
}

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

const CREATED_AT = '2026-04-01T08:00:00.000Z';
const FIRST_ORDER_AT = Date.parse('2026-05-01T09:00:00.000Z');
const DAY_MS = 86_400_000;

function statusFor(index: number, count: number, random: () => number): OrderStatus {
  const age = count - index; // 1 for the newest order
  if (age <= 3) return 'PLACED';
  if (age <= 6) return 'SHIPPED';
  return random() < 0.12 ? 'CANCELLED' : 'DELIVERED';
}

function ordersFor(
  user: UserModel,
  count: number,
  spacingDays: number,
  random: () => number,
  products: ProductModel[],
): OrderModel[] {
  const orders: OrderModel[] = [];
  for (let i = 0; i < count; i++) {
    const placedMs = FIRST_ORDER_AT + i * spacingDays * DAY_MS + Math.floor(random() * 10 * 3_600_000);
    const placedAt = new Date(placedMs).toISOString();
    const lineCount = 1 + Math.floor(random() * 3);
    const chosen = new Set<ProductModel>();
    while (chosen.size < lineCount) chosen.add(products[Math.floor(random() * products.length)] as ProductModel);
    const items = [...chosen].map((product) => ({
      productId: product.productId,
      productName: product.name,
      unitPriceCents: product.priceCents,
      quantity: 1 + Math.floor(random() * 3),
    }));
    const status = statusFor(i, count, random);
    orders.push({
      kind: 'Order',
      orderId: `demo-${user.userId}-${String(i + 1).padStart(3, '0')}`,
      userId: user.userId,
      status,
      placedAt,
      updatedAt: status === 'PLACED' ? placedAt : new Date(placedMs + 2 * DAY_MS).toISOString(),
      items,
      totalCents: items.reduce((sum, line) => sum + line.unitPriceCents * line.quantity, 0),
      version: 1,
    });
  }
  return orders;
}

export function demoData(): DemoData {
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
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    version: 1,
  }));
  const user = (userId: string, name: string, orderCount: number): UserModel => ({
    kind: 'User',
    userId,
    email: `${userId}@example.com`,
    name,
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    orderCount,
    statusCounts: null,
    version: 1,
  });
  const alice = user('alice', 'Alice Example', 30);
  const bob = user('bob', 'Bob Example', 4);
  const orders = [...ordersFor(alice, 30, 7, random, products), ...ordersFor(bob, 4, 45, random, products)];
  const users = [alice, bob].map((u) => ({ ...u, statusCounts: countByStatus(orders, u.userId) }));
  return { users, products, orders };
}

function countByStatus(orders: readonly OrderModel[], userId: string): Record<OrderStatus, number> {
  const counts = noStatusCounts();
  for (const order of orders) if (order.userId === userId) counts[order.status] += 1;
  return counts;
}
