/**
 * The spans of one execution (an HTTP request's operation, a WebSocket operation, one event of
 * a subscription): the operation span, and the DynamoDB and resolver spans under it.
 *
 * Every span of a request carries the request's DynamoDB totals (calls, RCU and WCU, and the
 * units per DynamoDB operation), which are only known at its end. So a child span that ends
 * early is held: its end time is taken when it ends, and it is ended with that time once the
 * request finishes and its totals are stamped on it. The hold is bounded (MAX_HELD_SPANS);
 * beyond it a span ends at once, without the totals.
 *
 * A RequestTrace is found from the execution's cost record (traceOf), the one object every
 * DynamoDB call of the execution already sees (db/client.ts `costed`).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, AttributeValue, Context, Span } from '@opentelemetry/api';
import { TG } from './semconv.js';
import { formatTraceparent } from './traceparent.js';
import { now, tracing } from './tracing.js';

/** More spans than any bounded request makes; a runaway one cannot hold memory through its spans. */
export const MAX_HELD_SPANS = 512;

/** The totals a request's cost record keeps (db/capacity.ts RequestCost). */
export interface CostTotals {
  requests: number;
  readCapacityUnits: number;
  writeCapacityUnits: number;
}

/** Where a request trace hangs: an HTTP server span, a subscription event, a traceparent. */
export interface TraceParent {
  context: Context;
  /** Told the totals when a request trace under it finishes (the HTTP span stamps them too). */
  adopt?(child: RequestTrace): void;
}

const byCost = new WeakMap<object, RequestTrace>();

const round = (units: number): number => Math.round(units * 100) / 100;

export class RequestTrace {
  readonly span: Span;
  readonly context: Context;
  readonly #cost: CostTotals;
  readonly #held: [Span, number][] = [];
  readonly #units = new Map<string, { read: number; write: number }>();
  #finished = false;

  constructor(span: Span, context: Context, cost: CostTotals) {
    this.span = span;
    this.context = context;
    this.#cost = cost;
  }

  /** The `traceparent` of the operation span: what a write leaves on its item for the stream processing. */
  get traceparent(): string {
    return formatTraceparent(this.span.spanContext());
  }

  /** A span under the operation span (a DynamoDB call, a resolver). */
  child(name: string, kind: SpanKind, attributes: Attributes, parent: Context = this.context): Span {
    return (tracing()?.tracer ?? trace.getTracer('tablegraph')).startSpan(name, { kind, attributes }, parent);
  }

  /** Ends `span` now, as far as its timing goes; its totals are stamped when the request finishes. */
  hold(span: Span): void {
    if (this.#finished || this.#held.length >= MAX_HELD_SPANS) span.end();
    else this.#held.push([span, now()]);
  }

  /** Capacity one DynamoDB call consumed, for the per-operation totals. */
  addUnits(operation: string, read: number, write: number): void {
    const units = this.#units.get(operation) ?? { read: 0, write: 0 };
    units.read += read;
    units.write += write;
    this.#units.set(operation, units);
  }

  /** The request's DynamoDB totals as span attributes. */
  totals(): Attributes {
    const attributes: Record<string, AttributeValue> = {
      [TG.REQUEST_REQUESTS]: this.#cost.requests,
      [TG.REQUEST_READ_UNITS]: round(this.#cost.readCapacityUnits),
      [TG.REQUEST_WRITE_UNITS]: round(this.#cost.writeCapacityUnits),
    };
    for (const [operation, { read, write }] of this.#units) {
      attributes[`${TG.REQUEST_BY_OPERATION}.${operation}.read_capacity_units`] = round(read);
      attributes[`${TG.REQUEST_BY_OPERATION}.${operation}.write_capacity_units`] = round(write);
    }
    return attributes;
  }

  /** Stamps the totals on every span of the request and ends them (once; later calls do nothing). */
  finish(attributes: Attributes = {}, error?: string): void {
    if (this.#finished) return;
    this.#finished = true;
    const totals = this.totals();
    for (const [span, endTime] of this.#held) span.setAttributes(totals).end(endTime);
    this.#held.length = 0;
    this.span.setAttributes({ ...attributes, ...totals });
    if (error) this.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    this.span.end();
  }
}

/**
 * Starts the operation span of the execution whose cost record is `cost`, under `parent`.
 * Undefined while tracing is off, and for an execution the sampler did not pick (its calls
 * then make no spans at all).
 */
export function startRequestTrace(
  cost: object & CostTotals,
  parent?: TraceParent,
  { name = 'graphql', kind, attributes }: { name?: string; kind?: SpanKind; attributes?: Attributes } = {},
): RequestTrace | undefined {
  const active = tracing();
  if (!active) return undefined;
  const context = parent?.context;
  const span = context
    ? active.tracer.startSpan(name, { kind: kind ?? SpanKind.INTERNAL, attributes }, context)
    : active.tracer.startSpan(name, { kind: kind ?? SpanKind.SERVER, attributes, root: true });
  if (!span.isRecording()) return undefined;
  const requestTrace = new RequestTrace(span, trace.setSpan(context ?? ROOT_CONTEXT, span), cost);
  byCost.set(cost, requestTrace);
  parent?.adopt?.(requestTrace);
  return requestTrace;
}

/** The trace of the execution whose cost record is `cost` (undefined: not traced). */
export const traceOf = (cost: object): RequestTrace | undefined => (tracing() ? byCost.get(cost) : undefined);

const byClient = new WeakMap<object, object>();

/** Ties an execution's DynamoDB client to its cost record (db/client.ts `costed`), while tracing. */
export function bindClient(client: object, cost: object): void {
  if (tracing()) byClient.set(client, cost);
}

/**
 * The `traceparent` a write made through `client` leaves on the item the stream processing
 * reads (the order's details item), so that the processing joins the write's trace. Undefined
 * while the execution is not traced: nothing is added to the item then.
 */
export function traceparentFor(client: object): string | undefined {
  if (!tracing()) return undefined;
  const cost = byClient.get(client);
  return cost ? byCost.get(cost)?.traceparent : undefined;
}
