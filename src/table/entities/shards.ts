/**
 * Write sharding of the shop-wide index views: GSI2's orders (all, or by status) and GSI4/GSI5's
 * products. Every order (product) lands in one of a constant number of partitions per view,
 * chosen from its id, so no single index partition takes every write of the shop. The counts
 * are constants: changing one moves every item to another partition, i.e. a migration.
 */
import { assertId } from '../ids.js';

export const ORDER_SHARDS = 4;
export const PRODUCT_SHARDS = 4;

/** A stable hash of an id (FNV-1a), so both copies of an order and every writer agree. */
export function fnv1a(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The shard of an order. */
export const orderShard = (orderId: string): number => fnv1a(orderId) % ORDER_SHARDS;
/** The shard of a product (an API id: checked). */
export const productShard = (productId: string): number => fnv1a(assertId(productId, 'productId')) % PRODUCT_SHARDS;
