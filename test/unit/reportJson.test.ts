/**
 * The report writes an answer's JSON from its parts (the data's JSON as the executor wrote it,
 * the cost extension from its numbers): byte for byte what `JSON.stringify` of the answer gives.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { newRequestCost } from '../../src/db/capacity.js';
import { createFormatError } from '../../src/pipeline/report/errorMasking.js';
import { costExtension, costExtensionsJson, visibleCost } from '../../src/pipeline/report/extensions.js';
import { createReporter } from '../../src/pipeline/report/report.js';
import type { CostDetails } from '../../src/pipeline/report/extensions.js';

const costOf = (requests: number, read: number, write: number) => ({
  ...newRequestCost(),
  requests,
  readCapacityUnits: read,
  writeCapacityUnits: write,
});

describe('costExtensionsJson', () => {
  it.each([
    [0, 0, 0],
    [1, 1.5, 0],
    [3, 0.1 + 0.2, 12.345],
    [20_000, 1e6 + 0.005, 1e-7],
  ])('writes %s requests, %s RCU, %s WCU as JSON.stringify does', (requests, read, write) => {
    const cost = costOf(requests, read, write);
    for (const visible of [costExtension(cost), { dynamodb: { requests: cost.requests } }]) {
      expect(costExtensionsJson(visible)).toBe(JSON.stringify({ cost: visible }));
    }
  });
});

describe("settle's answer", () => {
  const reporterOf = (costDetails: CostDetails) =>
    createReporter({
      log: pino({ level: 'silent' }),
      formatError: createFormatError(pino({ level: 'silent' }), { hideSuggestions: true }),
      costDetails,
      maxResponseBytes: 1_000_000,
      knownOperations: new Set(),
    });
  const base = { transport: 'http' as const, operationName: null, startedAt: performance.now() };

  it.each([
    ['an admin', 'admin', 'admin'],
    ['a customer', 'admin', 'customer'],
    ['a customer, all details shown', 'all', 'customer'],
  ] as const)('is the JSON of its result for %s, with the data written by the executor', (_who, details, role) => {
    const data = { product: { name: 'Tent "2p"', tags: ['a', 'ü'] } };
    const cost = costOf(2, 3.5, 0);
    const answer = reporterOf(details).settle({
      ...base,
      result: { data, dataJson: JSON.stringify(data) },
      cost,
      viewerRole: role,
    });
    const expected = { data, extensions: { cost: visibleCost(cost, details, role) } };
    expect(answer.body).toBe(JSON.stringify(expected));
    expect(answer.result).toEqual(expected);
    expect(answer.status).toBe(200);
  });

  it('keeps extensions the executor gave beside the cost', () => {
    const cost = costOf(1, 0.5, 0);
    const answer = reporterOf('all').settle({
      ...base,
      result: { data: { a: 1 }, extensions: { note: 'kept' } },
      cost,
      viewerRole: undefined,
    });
    expect(answer.body).toBe(
      JSON.stringify({ data: { a: 1 }, extensions: { note: 'kept', cost: costExtension(cost) } }),
    );
  });

  it("is made once for the subscriptions that shared an event's execution, each still an answer of its own", () => {
    const reporter = reporterOf('admin');
    const event = { seq: '1' };
    const cost = costOf(1, 0.5, 0);
    const shared = { data: { order: { orderId: 'o1' } } };
    const settle = (result: typeof shared, viewerRole: string, of = cost) =>
      reporter.settle({ ...base, transport: 'ws', result, cost: of, viewerRole, event });
    const first = settle(shared, 'admin');
    const second = settle(shared, 'admin');
    expect(second).not.toBe(first);
    expect(second.body).toBe(first.body);
    expect(second.result).toBe(first.result);
    // Anything that would change the answer makes it again: another viewer's role, another cost, another result.
    expect(settle(shared, 'customer').body).toBe(
      JSON.stringify({ ...shared, extensions: { cost: { dynamodb: { requests: 1 } } } }),
    );
    expect(settle(shared, 'admin', costOf(2, 1, 0)).body).toContain('"requests":2');
    expect(settle({ data: { order: { orderId: 'o2' } } }, 'admin').body).toContain('"o2"');
  });
});
