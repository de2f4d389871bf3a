/**
 * Prometheus metrics (prom-client), one registry per server so that several servers in one
 * process (tests) do not share counters. Exposed at GET /metrics.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { countUnhandledRejections } from '../../runMain.js';
import { observeRegistry } from '../../telemetry/start.js';

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * `process: false` leaves out prom-client's process and Node.js metrics: a Lambda writes its
 * metrics to its log (EMF), where they would be a line each per invocation for nothing.
 */
export function createMetrics({ process = true }: { process?: boolean } = {}) {
  const registry = new Registry();
  if (process) {
    collectDefaultMetrics({ register: registry });
    countUnhandledRejections(registry);
  }
  // Exported over OTLP too when a collector is configured (telemetry/promBridge.ts).
  observeRegistry(registry);
  return {
    registry,
    requestDuration: new Histogram({
      name: 'graphql_request_duration_seconds',
      help: 'GraphQL request duration by operation name',
      labelNames: ['operation'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    errors: new Counter({
      name: 'graphql_errors_total',
      help: 'GraphQL errors by extensions.code',
      labelNames: ['code'] as const,
      registers: [registry],
    }),
    executorFallbacks: new Counter({
      name: 'graphql_executor_fallbacks_total',
      help: 'Executions the planned executor left to graphql-js, by why (docs/performance.md)',
      labelNames: ['class'] as const,
      registers: [registry],
    }),
    dynamoRequests: new Counter({
      name: 'dynamodb_requests_total',
      help: 'DynamoDB API calls by operation and outcome',
      labelNames: ['operation', 'outcome'] as const,
      registers: [registry],
    }),
    dynamoCapacity: new Counter({
      name: 'dynamodb_consumed_capacity_units_total',
      help: 'Consumed capacity units reported by DynamoDB, by operation and kind (read or write)',
      labelNames: ['operation', 'kind'] as const,
      registers: [registry],
    }),
    eventFanOut: new Histogram({
      name: 'tablegraph_event_fanout_seconds',
      help: "From a change event reaching this instance to one subscriber's answer to it ready for its transport, per subscriber",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    streamLag: new Gauge({
      name: 'dynamodb_stream_lag_seconds',
      help: 'Age of the newest stream record processed by the in-process stream consumer',
      registers: [registry],
    }),
  };
}

interface CapacityEntry {
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
  CapacityUnits?: number;
}

/** One DynamoDB command's metric labels, worked out once per command name. */
interface CommandLabels {
  write: boolean;
  ok: { operation: string; outcome: 'ok' };
  error: { operation: string; outcome: 'error' };
  read: { operation: string; kind: 'read' };
  written: { operation: string; kind: 'write' };
}

const commandLabelsOf = (commandName: string): CommandLabels => {
  const operation = commandName.replace(/Command$/, '');
  return {
    write: /Put|Update|Delete|Write/.test(operation),
    ok: { operation, outcome: 'ok' },
    error: { operation, outcome: 'error' },
    read: { operation, kind: 'read' },
    written: { operation, kind: 'write' },
  };
};

/** Counts every call of `client` (and the capacity it consumed), whoever made it. */
export function instrumentClient(client: DynamoDBClient, metrics: Metrics): void {
  // By command name: the SDK's commands, a few dozen at most.
  const labelsByCommand = new Map<string, CommandLabels>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const commandName = context.commandName ?? 'unknown';
      let labels = labelsByCommand.get(commandName);
      if (!labels) labelsByCommand.set(commandName, (labels = commandLabelsOf(commandName)));
      try {
        const result = await next(args);
        metrics.dynamoRequests.inc(labels.ok);
        const consumed = (result.output as { ConsumedCapacity?: CapacityEntry | CapacityEntry[] }).ConsumedCapacity;
        if (consumed === undefined) return result;
        for (const entry of Array.isArray(consumed) ? consumed : [consumed]) {
          const read = entry.ReadCapacityUnits ?? (labels.write ? 0 : (entry.CapacityUnits ?? 0));
          const written = entry.WriteCapacityUnits ?? (labels.write ? (entry.CapacityUnits ?? 0) : 0);
          if (read) metrics.dynamoCapacity.inc(labels.read, read);
          if (written) metrics.dynamoCapacity.inc(labels.written, written);
        }
        return result;
      } catch (error) {
        metrics.dynamoRequests.inc(labels.error);
        throw error;
      }
    },
    { step: 'initialize', name: 'tablegraphMetrics', priority: 'low' },
  );
}
