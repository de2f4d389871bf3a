/**
 * Per-request DynamoDB cost accounting. Every execution context holds its own RequestCost and
 * a document client bound to it (`costed`, client.ts): each call a resolver, loader or write
 * makes through the context is added to that record, so no resolver or loader has to remember
 * to count. The record travels with the context, not through AsyncLocalStorage: the context
 * already reaches every resolver, loader and write, and each execution of an operation (the
 * differential suite runs two) counts into its own record without a second way of finding it
 * (docs/decisions/cost-record-in-context.md, with what AsyncLocalStorage costs on Node 24).
 */
export interface RequestCost {
  /** DynamoDB API calls made (one per command sent, retries by the SDK not included). */
  requests: number;
  readCapacityUnits: number;
  writeCapacityUnits: number;
  /** Calls per DynamoDB operation, e.g. { BatchGetItem: 1, Query: 1 }. */
  byOperation: Record<string, number>;
  /**
   * Calls still in flight. A prefetched page may outlive the field that wanted it (its user
   * resolved null first): the response waits for them (settled()) so that its cost is complete.
   */
  pending?: Set<Promise<unknown>>;
}

export const newRequestCost = (): RequestCost => ({
  requests: 0,
  readCapacityUnits: 0,
  writeCapacityUnits: 0,
  byOperation: {},
});

interface ConsumedCapacityLike {
  CapacityUnits?: number | undefined;
  ReadCapacityUnits?: number | undefined;
  WriteCapacityUnits?: number | undefined;
}

/**
 * `call`, one `operation` of `cost`'s: in flight until it settles, then added to `cost` with the
 * capacity its output reports (none when it failed). It leaves the calls in flight in the step
 * that counts it, so it is never counted twice nor missing. One `then`, no async function: a
 * request's reads are counted in promises too (docs/performance.md).
 */
export function countCall<T extends { ConsumedCapacity?: ConsumedCapacityLike | ConsumedCapacityLike[] | undefined }>(
  cost: RequestCost,
  operation: string,
  kind: 'read' | 'write',
  call: Promise<T>,
): Promise<T> {
  const pending = (cost.pending ??= new Set());
  const counted: Promise<T> = call.then(
    (output) => {
      addCall(cost, operation, output.ConsumedCapacity, kind);
      pending.delete(counted);
      return output;
    },
    (error: unknown) => {
      addCall(cost, operation, undefined, kind);
      pending.delete(counted);
      throw error;
    },
  );
  pending.add(counted);
  return counted;
}

/**
 * Resolves once every call of `cost` has settled: its figures are then final. Undefined when
 * none is in flight (no promise to wait for).
 */
export function settled(cost: RequestCost): Promise<void> | undefined {
  if (!cost.pending || cost.pending.size === 0) return undefined;
  const pending = cost.pending;
  return Promise.allSettled([...pending]).then(() => settled(cost));
}

/** Adds one call and the capacity it consumed (one entry, or one per table/index) to `cost`. */
export function addCall(
  cost: RequestCost,
  operation: string,
  consumed: ConsumedCapacityLike | ConsumedCapacityLike[] | undefined,
  kind: 'read' | 'write',
): void {
  cost.requests += 1;
  cost.byOperation[operation] = (cost.byOperation[operation] ?? 0) + 1;
  const entries = consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed];
  for (const entry of entries) {
    // DynamoDB returns Read/WriteCapacityUnits only for some operations; CapacityUnits always.
    const read = entry.ReadCapacityUnits ?? (kind === 'read' ? (entry.CapacityUnits ?? 0) : 0);
    const write = entry.WriteCapacityUnits ?? (kind === 'write' ? (entry.CapacityUnits ?? 0) : 0);
    cost.readCapacityUnits += read;
    cost.writeCapacityUnits += write;
  }
}

const readGates = new WeakMap<RequestCost, () => void>();

/**
 * Runs `gate` before each read sent in `cost`'s name (`costed`, client.ts); when it throws, the
 * read is not sent and fails with that error. The opening of a subscription is gated so
 * (pipeline/execution/subscribeReads.ts).
 */
export function gateReads(cost: RequestCost, gate: () => void): void {
  readGates.set(cost, gate);
}

/** The gate of `cost`'s reads, if any. */
export const readGateOf = (cost: RequestCost): (() => void) | undefined => readGates.get(cost);

/** Rounds capacity figures for display (DynamoDB reports halves for eventually consistent reads). */
export const roundUnits = (units: number): number => Math.round(units * 100) / 100;
