/** The catalog (what the GraphQL Lambda reads) and the registry (what npm run migrate runs) agree. */
import { describe, expect, it } from 'vitest';
import { MIGRATION_CATALOG } from '../src/migrations/catalog.js';
import { MIGRATIONS } from '../src/migrations/registry.js';

describe('the migration catalog', () => {
  it('lists the registry’s migrations, with the same ids and descriptions, in the same order', () => {
    expect(MIGRATION_CATALOG).toEqual(MIGRATIONS.map(({ id, description }) => ({ id, description })));
  });

  it('keeps ids in the order they apply', () => {
    const ids = MIGRATION_CATALOG.map((entry) => entry.id);
    expect(ids).toEqual([...ids].sort());
  });
});
