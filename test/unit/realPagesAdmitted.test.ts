/**
 * The cost limit refuses what a client must not ask for; these are shapes it must let through
 * with the default limits: every benchmark operation (the pages a shop's frontend asks for) and
 * an order history page of 50 typical orders with their lines' products, the largest page the
 * limit is sized for.
 */
import { describe, expect, it } from 'vitest';
import { loadBenchConfig } from '../../bench/config.js';
import { buildDataset } from '../../bench/dataset.js';
import { operations, USER_ORDERS_QUERY } from '../../bench/operations.js';
import { DEFAULT_LIMITS } from '../../src/config/index.js';
import { createAdmission } from '../../src/pipeline/admission/admission.js';
import { buildSchema } from '../../src/pipeline/schema/schema.js';

const admission = createAdmission({
  schema: buildSchema(),
  limits: DEFAULT_LIMITS,
  introspection: false,
  persistedOnly: false,
  documents: new Map(),
});

const costOf = async (query: string, variables: Record<string, unknown>) => {
  const verdict = await admission.admit({ query, variables }, 'http');
  return verdict.ok ? verdict.cost : verdict.errors.map((error) => error.message).join('; ');
};

describe('the default cost limit', () => {
  const data = buildDataset(loadBenchConfig(['--quick'], {}));

  it.each(operations(data, 'unit').map((operation) => [operation.id, operation] as const))(
    'admits the benchmark operation %s',
    async (_, operation) => {
      const cost = await costOf(operation.query, operation.variables(1, 'unit')());
      expect(cost).toBeTypeOf('number');
      expect(cost).toBeLessThanOrEqual(DEFAULT_LIMITS.maxCost);
    },
  );

  // The estimate assumes typical orders (Order.items' @listSize); the meter bounds larger ones.
  it.each([
    [50, true],
    [100, false],
  ])('for %i orders with their lines and products, admits: %s', async (first, admitted) => {
    const cost = await costOf(USER_ORDERS_QUERY.replace('first: 20', `first: ${first}`), { userId: 'alice' });
    if (admitted) expect(cost).toBeLessThanOrEqual(DEFAULT_LIMITS.maxCost);
    else expect(cost).toMatch(`exceeds the limit of ${DEFAULT_LIMITS.maxCost}`);
  });
});
