/** The catalog: products, their sale markers, and the category counters. */
import type { CategoryModel, ProductModel } from '../models.js';
import { int, str } from './attributes.js';
import type { Item } from './attributes.js';
import { defineEntity } from './entity.js';
import {
  CATEGORIES_PK,
  CATEGORY_PK,
  CATEGORY_PRODUCTS,
  PRICE_SK,
  PRODUCT_NAME_SK,
  PRODUCT_PK,
  SHOP_PRODUCTS,
  SHOP_PRODUCTS_PK,
} from './ranges.js';
import { fnv1a, PRODUCT_SHARDS, productShard } from './shards.js';
import { tagOf, TAGS } from './tags.js';
import { category, id, key } from './template.js';

export { PRODUCT_PK };
const DETAILS = key`DETAILS`;
const CATEGORY_SK = key`CATEGORY#${category('category')}`;

/** The keys of a product's browse orders (GSI3-GSI5, src/table/definition.ts). */
export function productBrowseKeys(product: Pick<ProductModel, 'productId' | 'priceCents'>): {
  GSI3SK: string;
  GSI4PK: string;
} {
  return {
    GSI3SK: PRICE_SK.build({ price: product.priceCents, productId: product.productId }),
    GSI4PK: SHOP_PRODUCTS_PK.build({ shard: productShard(product.productId) }),
  };
}

export const PRODUCT = defineEntity({
  type: 'Product',
  item: 'product',
  holds: 'name, description, category, price, stock, soldCount, version',
  key: { PK: PRODUCT_PK, SK: DETAILS },
  indexes: { GSI1PK: CATEGORY_PK, GSI1SK: PRODUCT_NAME_SK, GSI3SK: PRICE_SK, GSI4PK: SHOP_PRODUCTS_PK },
  visibility: 'public',
  tags: [tagOf(TAGS.product, 'productId')],
  node: 'Product',
  // Its shard of the shop-wide listings follows from its id; its category does not (a product
  // write names its category's counter when the category changes, and the writer adds it).
  writeTags: ({ productId }) => [TAGS.products.of(fnv1a(productId) % PRODUCT_SHARDS)],
  listedIn: [CATEGORY_PRODUCTS, SHOP_PRODUCTS],
  codec: {
    toItem: (product: ProductModel): Item => ({
      PK: PRODUCT_PK.build(product),
      SK: DETAILS.build({}),
      entityType: 'Product',
      GSI1PK: CATEGORY_PK.build(product),
      GSI1SK: PRODUCT_NAME_SK.build(product),
      ...productBrowseKeys(product),
      productId: product.productId,
      name: product.name,
      description: product.description,
      category: product.category,
      price: product.priceCents,
      stock: product.stock,
      createdAt: product.createdAt,
      updatedAt: product.updatedAt,
      version: product.version,
    }),
    fromItem: (item: Item): ProductModel => ({
      kind: 'Product',
      productId: str(item, 'productId'),
      name: str(item, 'name'),
      description: str(item, 'description'),
      category: str(item, 'category'),
      priceCents: int(item, 'price'),
      stock: int(item, 'stock'),
      soldCount: item.soldCount === undefined ? 0 : int(item, 'soldCount'),
      createdAt: str(item, 'createdAt'),
      updatedAt: str(item, 'updatedAt'),
      version: int(item, 'version'),
    }),
  },
});

/**
 * One per (product, order): whether the stream processor counted the order's units in the
 * product's `soldCount` (src/streams/soldCount.ts). Bookkeeping no answer reads: the count it
 * guards changes the product item, whose change evicts what showed it.
 */
export const SALE_MARKER = defineEntity({
  type: 'ProductSale',
  item: 'sale marker',
  holds: 'whether the stream counted an order in soldCount',
  key: { PK: PRODUCT_PK, SK: key`SOLD#${id('orderId')}` },
  visibility: 'admin',
  tags: [],
});

/**
 * A category's product counter, kept in the transactions of the product writes. It is listed
 * by `categories` (the range of its partition) and read beside a category's products as its
 * `totalCount`.
 */
export const CATEGORY = defineEntity({
  type: 'Category',
  item: 'category counter',
  holds: 'name, `productCount`',
  key: { PK: CATEGORIES_PK, SK: CATEGORY_SK },
  visibility: 'public',
  tags: [tagOf(TAGS.category, 'category')],
  codec: {
    toItem: (counter: CategoryModel): Item => ({
      PK: CATEGORIES_PK.build({}),
      SK: CATEGORY_SK.build({ category: counter.name }),
      entityType: 'Category',
      name: counter.name,
      productCount: counter.productCount,
    }),
    fromItem: (item: Item): CategoryModel => ({
      kind: 'Category',
      name: str(item, 'name'),
      productCount: int(item, 'productCount'),
    }),
  },
});
