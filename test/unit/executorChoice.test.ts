/**
 * Which executor an admitted operation runs on: under EXECUTOR=auto the planned one; under
 * `compiled`, queries whose estimated cost (admission's) reaches the threshold run compiled and
 * small queries, mutations and subscriptions stay on graphql-js. Variables that do not coerce
 * never get this far: admission refuses them.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config/index.js';
import { createAdmission } from '../../src/pipeline/admission/admission.js';
import type { AdmittedOperation } from '../../src/pipeline/admission/admission.js';
import { executorKindFor } from '../../src/pipeline/execution/execution.js';
import { buildSchema } from '../../src/pipeline/schema/schema.js';
import { TrustedDocuments } from '../../src/pipeline/documents/trustedDocuments.js';

const admission = createAdmission({
  schema: buildSchema(),
  limits: DEFAULT_LIMITS,
  introspection: true,
  persistedOnly: false,
  documents: new TrustedDocuments(),
});
const admit = async (query: string, variables: Record<string, unknown> = {}): Promise<AdmittedOperation> => {
  const admitted = await admission.admit({ query, variables }, 'ws');
  if (!admitted.ok) throw new Error(admitted.errors[0]?.message);
  return admitted;
};

const PAGE = `query Page($category: String!, $first: Int) {
  products(category: $category, first: $first) { edges { cursor node { id productId name description stock price { amount currencyCode } } } }
}`;
const ONE = `query One($productId: ID!) { product(productId: $productId) { id name } }`;

describe('the executor of an admitted operation', () => {
  it('EXECUTOR=auto plans every operation (the planner hands what it does not cover to graphql-js)', async () => {
    for (const admitted of [
      await admit(PAGE, { category: 'books', first: 20 }),
      await admit(ONE, { productId: 'p-1' }),
      await admit(
        `mutation { updateProduct(input: { productId: "p-1", expectedVersion: 1, name: "n" }) { product { id } } }`,
      ),
    ]) {
      expect(executorKindFor('auto', 200, admitted)).toBe('planned');
    }
  });

  it('EXECUTOR=compiled compiles a page of many fields, not a small query', async () => {
    expect(executorKindFor('compiled', 200, await admit(PAGE, { category: 'books', first: 20 }))).toBe('compiled');
    expect(executorKindFor('compiled', 200, await admit(ONE, { productId: 'p-1' }))).toBe('graphql-js');
  });

  it('EXECUTOR=compiled follows the variables that size the page, and the threshold', async () => {
    const small = await admit(PAGE, { category: 'books', first: 1 });
    expect(executorKindFor('compiled', 200, small)).toBe('graphql-js');
    expect(executorKindFor('compiled', 1, small)).toBe('compiled');
  });

  it('EXECUTOR=compiled leaves mutations and subscriptions to graphql-js; graphql-js runs everything', async () => {
    // Each would reach a threshold of 0 by its cost: only its kind keeps it on graphql-js.
    const query = await admit(`{ product(productId: "p-1") { id } }`);
    expect(executorKindFor('compiled', 0, query)).toBe('compiled');
    const mutation = await admit(
      `mutation { updateProduct(input: { productId: "p-1", expectedVersion: 1, name: "n" }) { product { id } } }`,
    );
    expect(executorKindFor('compiled', 0, mutation)).toBe('graphql-js');
    const subscription = await admit(`subscription { orderUpdated(orderId: "o-1") { type order { id } } }`);
    expect(executorKindFor('compiled', 0, subscription)).toBe('graphql-js');
    expect(executorKindFor('graphql-js', 0, query)).toBe('graphql-js');
  });

  it('never sees variables that do not coerce: admission refuses them', async () => {
    const refused = await admission.admit({ query: PAGE, variables: { category: 7, first: 20 } }, 'ws');
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.errors[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });
});
