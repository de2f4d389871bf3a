/**
 * The release's migrations by id, oldest first, without their code: what a process that only
 * asks "is the table migrated?" (the GraphQL Lambda) needs. Keeping the implementations out of
 * its imports keeps their DynamoDB calls (Scan, UpdateTable) out of its bundle and its IAM role.
 * Append only; registry.ts lists the implementations in the same order (a test checks it).
 */
export interface MigrationEntry {
  /** `0001-shop-orders-index`: sorts in the order migrations apply. */
  id: string;
  description: string;
}

export const SHOP_ORDERS_INDEX: MigrationEntry = {
  id: '0001-shop-orders-index',
  description: 'GSI2 (shop-wide orders, sharded), per-status order counts, category product counts',
};

export const PRODUCT_INDEXES_MIGRATION: MigrationEntry = {
  id: '0002-product-indexes',
  description: 'GSI3 (a category by price), GSI4 and GSI5 (the whole shop by name and by price, sharded)',
};

export const MIGRATION_CATALOG: readonly MigrationEntry[] = [SHOP_ORDERS_INDEX, PRODUCT_INDEXES_MIGRATION];
