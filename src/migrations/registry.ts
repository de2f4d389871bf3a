/** The release's migrations, oldest first. Append only: an applied migration is never edited. */
import type { Migration } from './migration.js';
import { shopOrdersMigration } from './m0001ShopOrders.js';
import { productIndexesMigration } from './m0002ProductIndexes.js';

export const MIGRATIONS: readonly Migration[] = [shopOrdersMigration, productIndexesMigration];
