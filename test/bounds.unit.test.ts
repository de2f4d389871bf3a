/** The pure cores of the bounds: cost per field, metric labels, /metrics access, restart backoff, Unicode rules. */
import type { GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { restartDelayMs } from '../src/db/local.js';
import { OTHER_OPERATION, operationLabel } from '../src/pipeline/report/metricLabels.js';
import { fieldCost } from '../src/pipeline/admission/queryCost.js';
import { newRequestCost } from '../src/db/capacity.js';
import { answerJson } from '../src/pipeline/report/answer.js';
import { createReporter } from '../src/pipeline/report/report.js';
import { buildSchema } from '../src/pipeline/schema/schema.js';
import { schemaPolicy } from '../src/pipeline/schema/schemaPolicy.js';
import { unicodeProblem } from '../src/table/text.js';
import { metricsAllowed } from '../src/transports/http/metricsRoute.js';
import { pino } from 'pino';

describe('fieldCost (the directives of schema.graphql, read by the estimate)', () => {
  const schema = buildSchema();
  const policy = schemaPolicy(schema);
  const fieldOf = (type: string, field: string) => (schema.getType(type) as GraphQLObjectType).getFields()[field]!;

  it.each<[string, string, string, Record<string, unknown>, number, number]>([
    ["an order's lines, by the typical 5", 'Order', 'items', {}, 3, 1 + 3 * 5],
    ['a connection, by its first', 'User', 'orders', { first: 30 }, 2, 1 + 2 * 30],
    ['a connection, by the default page', 'User', 'orders', {}, 2, 1 + 2 * 20],
    ['a connection over the cap, by the cap', 'User', 'orders', { last: 500 }, 1, 101],
    ["a connection's nodes, once", 'OrderConnection', 'nodes', {}, 5, 6],
    ['nodes(ids:), by its ids', 'Query', 'nodes', { ids: ['a', 'b', 'c'] }, 4, 13],
    ['a description, by its weight', 'Product', 'description', {}, 0, 20],
    ["a line's product name, by the weight of a product's name", 'OrderItem', 'productName', {}, 0, 2],
    ['userErrors, by the most a payload carries', 'PlaceOrderPayload', 'userErrors', {}, 3, 1 + 3 * 20],
    ['an introspection field, at nothing', '__Type', 'fields', {}, 50, 0],
  ])('counts %s', (_, owner, field, args, child, expected) => {
    expect(fieldCost(policy, owner, fieldOf(owner, field), args, child)).toBe(expected);
  });
});

describe('operationLabel', () => {
  const known = new Set(['UserOrdersPage', 'X'.repeat(100)]);
  it.each([
    ['UserOrdersPage', 'UserOrdersPage'],
    ['Probe1', OTHER_OPERATION],
    [undefined, OTHER_OPERATION],
    ['X'.repeat(100), 'X'.repeat(64)],
  ])('labels %s as %s', (name, label) => {
    expect(operationLabel(name, known)).toBe(label);
  });
});

describe('metricsAllowed', () => {
  it.each<[string | undefined, string | undefined, string | undefined, string]>([
    ['127.0.0.1', undefined, undefined, 'ok'],
    ['::ffff:127.0.0.1', undefined, undefined, 'ok'],
    ['::1', undefined, undefined, 'ok'],
    ['10.0.0.8', undefined, undefined, 'forbidden'],
    ['10.0.0.8', 'Bearer s3cret', 's3cret', 'ok'],
    ['10.0.0.8', 'Bearer wrong', 's3cret', 'unauthorized'],
    ['127.0.0.1', 'Bearer wrong', 's3cret', 'unauthorized'],
    ['10.0.0.8', 'Bearer s3cret', undefined, 'forbidden'],
  ])('from %s with %s (token %s): %s', (address, authorization, token, verdict) => {
    expect(metricsAllowed(address, authorization, { token })).toBe(verdict);
  });
});

it('backs off restarts from 0.5 s, doubling, to at most 30 s', () => {
  expect([1, 2, 3, 4, 7, 8, 20].map(restartDelayMs)).toEqual([500, 1000, 2000, 4000, 30_000, 30_000, 30_000]);
});

describe("the report's one JSON of an answer", () => {
  const reporterWith = (maxResponseBytes: number) =>
    createReporter({
      log: pino({ level: 'silent' }),
      formatError: (formatted) => formatted,
      costDetails: 'admin',
      maxResponseBytes,
      knownOperations: new Set(),
    });
  const settle = (maxResponseBytes: number, data: Record<string, unknown>, dataJson?: string) =>
    reporterWith(maxResponseBytes).settle({
      transport: 'http',
      operationName: null,
      startedAt: performance.now(),
      result: { data },
      cost: newRequestCost(),
      viewerRole: undefined,
      dataJson,
    });

  it('keeps an answer within the ceiling and replaces one past it with RESPONSE_TOO_LARGE (400)', () => {
    const data = { name: 'x'.repeat(100) };
    const kept = settle(1000, data);
    expect(kept.status).toBe(200);
    expect(JSON.parse(kept.body)).toEqual({ data, extensions: { cost: { dynamodb: { requests: 0 } } } });
    const refused = settle(50, data);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toEqual({
      errors: [expect.objectContaining({ extensions: { code: 'RESPONSE_TOO_LARGE', maxBytes: 50 } })],
      extensions: { cost: { dynamodb: { requests: 0 } } },
    });
  });

  it('writes a stored answer with its JSON, byte for byte what serializing it would give', () => {
    const json = JSON.stringify({ product: { name: 'Ünïcode "quoted"\n', tags: ['a', null], price: 1.5e-7 } });
    const extensions = { cost: { dynamodb: { requests: 0 } } };
    const plain = JSON.stringify({ data: JSON.parse(json) as object, extensions });
    expect(answerJson(json, JSON.stringify(extensions))).toBe(plain);
    expect(settle(10_000, JSON.parse(json) as Record<string, unknown>, json).body).toBe(plain);
    expect(settle(10_000, JSON.parse(json) as Record<string, unknown>).body).toBe(plain);
  });
});

describe('unicodeProblem', () => {
  it.each([
    ['Ann', false, undefined],
    ['Zoë Ångström 山田', false, undefined],
    ['two\nlines\tand a tab', true, undefined],
    ['two\nlines', false, /U\+000A/],
    ['C1 \u0085', true, /U\+0085/],
    ['bidi \u202E', false, /U\+202E/],
    ['zero width \u200B', false, /U\+200B/],
    ['soft hyphen \u00AD', false, /U\+00AD/],
    ['separator \u2029', true, /U\+2029/],
    ['lone \uDC00', false, /well-formed/],
  ])('%j (multi-line %s)', (text, multiline, problem) => {
    const found = unicodeProblem(text, { multiline });
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });
});
