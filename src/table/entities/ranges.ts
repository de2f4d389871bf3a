/**
 * The ranges the Queries read: a partition of the table or of an index, with the templates of
 * its partition and sort keys. A page query names its range's tags from here as a value (where
 * it is built, src/db/pageQueries.ts), and a changed item maps to the tags of every range its
 * image lies in: both sides read the same declaration, so a read and the change of what it read
 * always share a tag. The entity declarations use these templates for the keys that place an
 * item in a range.
 */
import { ORDER_STATUSES } from '../models.js';
import type { OrderStatus } from '../models.js';
import { Range } from './entity.js';
import { ORDER_SHARDS, PRODUCT_SHARDS } from './shards.js';
import { fixed, tagOf, TAGS } from './tags.js';
import { category, cents, digit, email, id, instant, key, newestFirst, oneOf, shard, sortName } from './template.js';

/** A user's partition: their profile and the copies of their orders. */
export const USER_PK = key`USER#${id('userId')}`;
/** An email in its compared form: the user look-up's GSI1 partition, and the uniqueness guard's key. */
export const EMAIL = key`EMAIL#${email('email')}`;
/** An order's position in time: the sort key of a user's orders and of the shop-wide views. */
export const ORDER_SK = key`ORDER#${instant('placedAt')}#${id('orderId')}`;
/** A user's orders by status (LSI1SK): a status change rewrites it in the same transaction. */
export const STATUS_SK = key`STATUS#${oneOf<'status', OrderStatus>('status', ORDER_STATUSES)}#${instant('placedAt')}#${id('orderId')}`;
export const SHOP_ORDERS_ALL_PK = key`ORDERS#ALL#${shard('shard', ORDER_SHARDS, 'order')}`;
export const SHOP_ORDERS_STATUS_PK = key`ORDERS#STATUS#${oneOf<'status', OrderStatus>('status', ORDER_STATUSES)}#${shard('shard', ORDER_SHARDS, 'order')}`;
/** A category's products (GSI1 and GSI3 partition). */
export const CATEGORY_PK = key`CATEGORY#${category('category')}`;
/** A product by lower-cased name (GSI1SK, and GSI4's sort key): productId breaks ties. */
export const PRODUCT_NAME_SK = key`PRODUCT#${sortName('name')}#${id('productId')}`;
/** Cents as 12 digits (the largest price has 9), so string order is numeric order. */
export const PRICE_DIGITS = 12;
/** A product by price (GSI3SK, and GSI5's sort key): productId breaks ties. */
export const PRICE_SK = key`PRICE#${cents('price', PRICE_DIGITS)}#${id('productId')}`;
/** One shard of the whole shop's products (GSI4PK, the partition of GSI4 and GSI5). */
export const SHOP_PRODUCTS_PK = key`PRODUCTS#${shard('shard', PRODUCT_SHARDS, 'product')}`;
/** The partition of the category counters: listing the categories is one Query. */
export const CATEGORIES_PK = key`META#categories`;
/** A product's partition: the product, its rating, its reviews, its buyers and its sale markers. */
export const PRODUCT_PK = key`PRODUCT#${id('productId')}`;
/**
 * A review's copy in its product's partition, newest first in ascending order, so that it sorts
 * after the product (`DETAILS`) and its rating (`RATING`): one Query reads all three.
 */
export const REVIEW_SK = key`REVIEW#${newestFirst('createdAt')}#${id('reviewId')}`;
/** A product's reviews by their stars (LSI1SK), the newest first among equals when read down. */
export const STARS_SK = key`STARS#${digit('rating', 5)}#${instant('createdAt')}#${id('reviewId')}`;

/** A user's orders, newest first, by status or in a window (access patterns 3, 8, 10). */
export const USER_ORDERS = new Range({
  name: "a user's orders",
  patterns: '3, 8, 10',
  indexes: ['table', 'LSI1'],
  partition: { attribute: 'PK', template: USER_PK },
  sorts: [
    { attribute: 'SK', template: ORDER_SK },
    { attribute: 'LSI1SK', template: STATUS_SK },
  ],
  within: { attribute: 'SK', prefix: ORDER_SK.prefix },
  tags: [tagOf(TAGS.userOrders, 'userId')],
});

/** A user by email (access pattern 2). */
export const USER_BY_EMAIL = new Range({
  name: 'a user by email',
  patterns: '2',
  indexes: ['GSI1'],
  partition: { attribute: 'GSI1PK', template: EMAIL },
  sorts: [],
  tags: [tagOf(TAGS.email, 'email')],
});

/** A category's products by name or by price, filtered or not, either way (6, 11, 12, 14, 17). */
export const CATEGORY_PRODUCTS = new Range({
  name: "a category's products",
  patterns: '6, 11, 12, 14, 17',
  indexes: ['GSI1', 'GSI3'],
  partition: { attribute: 'GSI1PK', template: CATEGORY_PK },
  sorts: [
    { attribute: 'GSI1SK', template: PRODUCT_NAME_SK },
    { attribute: 'GSI3SK', template: PRICE_SK },
  ],
  tags: [tagOf(TAGS.category, 'category')],
});

/** One shard of the whole shop's products, by name or by price (15, 16, 17). */
export const SHOP_PRODUCTS = new Range({
  name: "the shop's products, one shard",
  patterns: '15, 16, 17',
  indexes: ['GSI4', 'GSI5'],
  partition: { attribute: 'GSI4PK', template: SHOP_PRODUCTS_PK },
  sorts: [
    { attribute: 'GSI1SK', template: PRODUCT_NAME_SK },
    { attribute: 'GSI3SK', template: PRICE_SK },
  ],
  tags: [tagOf(TAGS.products, 'shard')],
});

/** One shard of every order of the shop, newest first (9). The details items carry it. */
export const SHOP_ORDERS_ALL = new Range({
  name: "the shop's orders, one shard",
  patterns: '9',
  indexes: ['GSI2'],
  partition: { attribute: 'GSI2PK', template: SHOP_ORDERS_ALL_PK },
  sorts: [{ attribute: 'GSI2SK', template: ORDER_SK }],
  tags: [tagOf(TAGS.orders, fixed('ALL'), 'shard')],
});

/** One shard of the shop's orders in one status (9). The copies in the users' partitions carry it. */
export const SHOP_ORDERS_BY_STATUS = new Range({
  name: "the shop's orders in one status, one shard",
  patterns: '9',
  indexes: ['GSI2'],
  partition: { attribute: 'GSI2PK', template: SHOP_ORDERS_STATUS_PK },
  sorts: [{ attribute: 'GSI2SK', template: ORDER_SK }],
  tags: [tagOf(TAGS.orders, 'status', 'shard')],
});

/** The category counters (13). */
export const CATEGORIES = new Range({
  name: 'the categories',
  patterns: '13',
  indexes: ['table'],
  partition: { attribute: 'PK', template: CATEGORIES_PK },
  sorts: [],
  tags: [tagOf(TAGS.categories)],
});

/** A product's reviews, newest first or by their stars (19, 20, 21). */
export const PRODUCT_REVIEWS = new Range({
  name: "a product's reviews",
  patterns: '19, 20, 21',
  indexes: ['table', 'LSI1'],
  partition: { attribute: 'PK', template: PRODUCT_PK },
  sorts: [
    { attribute: 'SK', template: REVIEW_SK },
    { attribute: 'LSI1SK', template: STARS_SK },
  ],
  within: { attribute: 'SK', prefix: REVIEW_SK.prefix },
  tags: [tagOf(TAGS.reviews, 'productId')],
});

/** Every range a Query of the API reads. */
export const RANGES: readonly Range<object>[] = [
  USER_ORDERS,
  USER_BY_EMAIL,
  CATEGORY_PRODUCTS,
  SHOP_PRODUCTS,
  SHOP_ORDERS_ALL,
  SHOP_ORDERS_BY_STATUS,
  CATEGORIES,
  PRODUCT_REVIEWS,
];
