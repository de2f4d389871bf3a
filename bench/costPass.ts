/**
 * The cost pass: every operation, a few requests each, sent one at a time to instances of the
 * systems that reach DynamoDB through the recording proxy. Each request's DynamoDB calls are
 * priced as Amazon DynamoDB would bill them (cost.ts); the figures DynamoDB Local reported in
 * extensions.cost.dynamodb are kept next to them.
 */
import { sumBilled } from './cost.js';
import type { CostProxy, RecordedCall } from './costProxy.js';
import { postGraphQL } from './load.js';
import type { Operation } from './operations.js';

export interface CostRow {
  op: string;
  variant: string;
  samples: number;
  /** What the system reported in extensions.cost.dynamodb (DynamoDB Local's figures), averaged. */
  reported: { requests: number; readCapacityUnits: number; writeCapacityUnits: number };
  /** What went over the wire, priced for Amazon DynamoDB, averaged per request. */
  amazon: {
    requests: number;
    byOperation: Record<string, number>;
    readUnits: number;
    eventualReadUnits: number;
    writeUnits: number;
    indexWriteUnits: number;
    /** Items read or written per request and their average size. */
    items: number;
    averageItemBytes: number;
    /** Bytes DynamoDB sent back per request. */
    wireBytes: number;
  };
}

interface Reported {
  extensions?: { cost?: { dynamodb?: { requests: number; readCapacityUnits: number; writeCapacityUnits: number } } };
  data?: { placeOrder?: { userErrors?: unknown[] } } | null;
}

export async function costOf(
  proxy: CostProxy,
  url: string,
  headers: Record<string, string>,
  op: Operation,
  variant: string,
  samples: number,
  seed: number,
): Promise<CostRow> {
  const variables = op.variables(seed, `cost-${variant}`);
  const reported = { requests: 0, readCapacityUnits: 0, writeCapacityUnits: 0 };
  const amazon = {
    requests: 0,
    byOperation: {} as Record<string, number>,
    readUnits: 0,
    eventualReadUnits: 0,
    writeUnits: 0,
    indexWriteUnits: 0,
    items: 0,
    averageItemBytes: 0,
    wireBytes: 0,
  };
  let itemBytes = 0;
  for (let i = 0; i < samples; i++) {
    proxy.start();
    let body: Reported;
    let calls: RecordedCall[];
    try {
      body = await postGraphQL<Reported>(url, headers, op.operationName, op.query, variables());
    } finally {
      // Always end the recording, even when the request failed.
      calls = proxy.stop();
    }
    if (body.data?.placeOrder?.userErrors?.length) {
      throw new Error(`${variant} ${op.id}: userErrors ${JSON.stringify(body.data.placeOrder.userErrors)}`);
    }
    const cost = body.extensions?.cost?.dynamodb;
    reported.requests += cost?.requests ?? 0;
    reported.readCapacityUnits += cost?.readCapacityUnits ?? 0;
    reported.writeCapacityUnits += cost?.writeCapacityUnits ?? 0;
    const billed = sumBilled(calls);
    amazon.requests += billed.calls;
    amazon.readUnits += billed.readUnits;
    amazon.eventualReadUnits += billed.eventualReadUnits;
    amazon.writeUnits += billed.writeUnits;
    amazon.indexWriteUnits += billed.indexWriteUnits;
    amazon.wireBytes += billed.wireBytes;
    for (const [operation, n] of Object.entries(billed.byOperation)) {
      amazon.byOperation[operation] = (amazon.byOperation[operation] ?? 0) + n;
    }
    for (const call of calls) {
      amazon.items += call.itemBytes.length;
      itemBytes += call.itemBytes.reduce((a, b) => a + b, 0);
    }
  }
  amazon.averageItemBytes = amazon.items ? itemBytes / amazon.items : 0;
  const per = (value: number) => value / samples;
  return {
    op: op.id,
    variant,
    samples,
    reported: {
      requests: per(reported.requests),
      readCapacityUnits: per(reported.readCapacityUnits),
      writeCapacityUnits: per(reported.writeCapacityUnits),
    },
    amazon: {
      ...amazon,
      requests: per(amazon.requests),
      byOperation: Object.fromEntries(Object.entries(amazon.byOperation).map(([name, n]) => [name, per(n)])),
      readUnits: per(amazon.readUnits),
      eventualReadUnits: per(amazon.eventualReadUnits),
      writeUnits: per(amazon.writeUnits),
      indexWriteUnits: per(amazon.indexWriteUnits),
      items: per(amazon.items),
      wireBytes: per(amazon.wireBytes),
    },
  };
}
