/**
 * A CLIENT span per DynamoDB call of a traced execution, made where the call is counted
 * (db/client.ts `costed`): the `aws.dynamodb.*` request attributes, then what DynamoDB
 * answered. Every span carries the consumed capacity (zeros with an empty
 * `aws.dynamodb.consumed_capacity` when DynamoDB reported none, as for a failed call), the
 * SDK's attempts and retry delay, the throttling exceptions of attempts the SDK retried, the
 * UnprocessedKeys/UnprocessedItems left, and for a cancelled transaction each action's
 * cancellation reason by the name the write gave it (db/transact.ts).
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import type { RequestTrace } from './requestTrace.js';
import { ATTR, TG } from './semconv.js';
import { tracing } from './tracing.js';

/** What a write or a batch knows about a command that the span should say. */
export interface CommandNotes {
  /** The transaction's action names, in TransactItems order. */
  actions?: readonly string[];
  /** The how-manieth resend of UnprocessedKeys/UnprocessedItems this command is (1 = first retry). */
  unprocessedRetry?: number;
}

const notes = new WeakMap<object, CommandNotes>();

/** Tells the command's span (if any) what `notes` say; free while tracing is off. */
export function noteCommand(command: object, commandNotes: CommandNotes): void {
  if (tracing()) notes.set(command, commandNotes);
}

/** The throttling exceptions DynamoDB answers (the SDK retries them). */
const THROTTLES = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'ReplicatedWriteConflictException',
]);

interface Middlewared {
  input?: Record<string, unknown>;
  middlewareStack?: {
    add(middleware: unknown, options: { step: 'deserialize'; name: string; override?: boolean }): void;
  };
}

interface ConsumedEntry {
  TableName?: string;
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

type SdkError = Error & {
  $metadata?: { attempts?: number; totalRetryDelay?: number; requestId?: string; httpStatusCode?: number };
  CancellationReasons?: { Code?: string }[];
  ThrottlingReasons?: { reason?: string }[];
  throttlingReasons?: { reason?: string }[];
};

function requestAttributes(operation: string, input: Record<string, unknown> | undefined): Attributes {
  const attributes: Attributes = {
    [ATTR.DB_SYSTEM_NAME]: 'aws.dynamodb',
    [ATTR.DB_OPERATION_NAME]: operation,
    [ATTR.RPC_SYSTEM]: 'aws-api',
    [ATTR.RPC_SERVICE]: 'DynamoDB',
    [ATTR.RPC_METHOD]: operation,
  };
  if (!input) return attributes;
  const tables = new Set<string>();
  if (typeof input.TableName === 'string') tables.add(input.TableName);
  for (const name of Object.keys((input.RequestItems as object | undefined) ?? {})) tables.add(name);
  const actions = (input.TransactItems as Record<string, { TableName?: string }>[] | undefined) ?? [];
  for (const action of actions) {
    for (const part of Object.values(action)) if (part?.TableName) tables.add(part.TableName);
  }
  if (tables.size > 0) {
    attributes[ATTR.AWS_DYNAMODB_TABLE_NAMES] = [...tables];
    if (tables.size === 1) attributes[ATTR.DB_COLLECTION_NAME] = [...tables][0];
  }
  if (actions.length > 0) attributes[ATTR.DB_OPERATION_BATCH_SIZE] = actions.length;
  if (typeof input.IndexName === 'string') attributes[ATTR.AWS_DYNAMODB_INDEX_NAME] = input.IndexName;
  if (typeof input.ConsistentRead === 'boolean') attributes[ATTR.AWS_DYNAMODB_CONSISTENT_READ] = input.ConsistentRead;
  if (typeof input.Limit === 'number') attributes[ATTR.AWS_DYNAMODB_LIMIT] = input.Limit;
  if (typeof input.ScanIndexForward === 'boolean') attributes[ATTR.AWS_DYNAMODB_SCAN_FORWARD] = input.ScanIndexForward;
  if (typeof input.Select === 'string') attributes[ATTR.AWS_DYNAMODB_SELECT] = input.Select;
  if (typeof input.ProjectionExpression === 'string')
    attributes[ATTR.AWS_DYNAMODB_PROJECTION] = input.ProjectionExpression;
  return attributes;
}

function capacityAttributes(consumed: ConsumedEntry | ConsumedEntry[] | undefined, kind: 'read' | 'write'): Attributes {
  const entries = consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed];
  let read = 0;
  let write = 0;
  for (const entry of entries) {
    // Like capacity.ts: CapacityUnits stands for the kind of the call when the split is missing.
    read += entry.ReadCapacityUnits ?? (kind === 'read' ? (entry.CapacityUnits ?? 0) : 0);
    write += entry.WriteCapacityUnits ?? (kind === 'write' ? (entry.CapacityUnits ?? 0) : 0);
  }
  return {
    [ATTR.AWS_DYNAMODB_CONSUMED_CAPACITY]: entries.map((entry) => JSON.stringify(entry)),
    [TG.READ_UNITS]: read,
    [TG.WRITE_UNITS]: write,
  };
}

const countOf = (requests: unknown): number =>
  Object.values((requests as Record<string, unknown[] | { Keys?: unknown[] }> | undefined) ?? {}).reduce<number>(
    (sum, entry) => sum + (Array.isArray(entry) ? entry.length : (entry.Keys?.length ?? 0)),
    0,
  );

/**
 * Sends `command` through `send` inside a span of `trace`. The span records each attempt the
 * SDK makes (a middleware on this command alone, below the SDK's retry step).
 */
export function tracedSend<T>(
  trace: RequestTrace,
  operation: string,
  kind: 'read' | 'write',
  command: object,
  send: () => Promise<T>,
): Promise<T> {
  const { input, middlewareStack } = command as Middlewared;
  const commandNotes = notes.get(command);
  const span: Span = trace.child(operation, SpanKind.CLIENT, requestAttributes(operation, input));
  if (commandNotes?.unprocessedRetry) span.setAttribute(TG.UNPROCESSED_RETRY, commandNotes.unprocessedRetry);
  const throttles: string[] = [];
  middlewareStack?.add(
    (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
      try {
        return await next(args);
      } catch (error) {
        const failure = error as SdkError;
        if (THROTTLES.has(failure.name)) {
          const reasons = [...(failure.ThrottlingReasons ?? []), ...(failure.throttlingReasons ?? [])];
          const reason = reasons.map((entry) => entry.reason).filter(Boolean);
          throttles.push(reason.length > 0 ? `${failure.name}:${reason.join('+')}` : failure.name);
        }
        throw error;
      }
    },
    { step: 'deserialize', name: 'tablegraphAttemptSpan', override: true },
  );
  const finish = (attributes: Attributes) => {
    if (throttles.length > 0) span.setAttribute(TG.THROTTLES, throttles.slice(0, 16));
    span.setAttributes(attributes);
    trace.addUnits(operation, Number(attributes[TG.READ_UNITS] ?? 0), Number(attributes[TG.WRITE_UNITS] ?? 0));
    trace.hold(span);
  };
  return send().then(
    (output) => {
      const result = output as Record<string, unknown> & {
        $metadata?: SdkError['$metadata'];
        ConsumedCapacity?: ConsumedEntry | ConsumedEntry[];
      };
      const attributes: Attributes = {
        ...capacityAttributes(result.ConsumedCapacity, kind),
        [TG.ATTEMPTS]: result.$metadata?.attempts ?? 1,
        [TG.RETRY_DELAY_MS]: result.$metadata?.totalRetryDelay ?? 0,
      };
      if (result.$metadata?.requestId) attributes[ATTR.AWS_REQUEST_ID] = result.$metadata.requestId;
      if (typeof result.Count === 'number') attributes[ATTR.AWS_DYNAMODB_COUNT] = result.Count;
      if (typeof result.ScannedCount === 'number') attributes[ATTR.AWS_DYNAMODB_SCANNED_COUNT] = result.ScannedCount;
      const unprocessed = countOf(result.UnprocessedKeys) + countOf(result.UnprocessedItems);
      if (result.UnprocessedKeys !== undefined || result.UnprocessedItems !== undefined)
        attributes[TG.UNPROCESSED] = unprocessed;
      finish(attributes);
      return output;
    },
    (error: unknown) => {
      const failure = error as SdkError;
      const attributes: Attributes = {
        ...capacityAttributes(undefined, kind),
        [ATTR.ERROR_TYPE]: failure.name ?? 'Error',
        [ATTR.DB_RESPONSE_STATUS_CODE]: String(failure.$metadata?.httpStatusCode ?? ''),
        [TG.ATTEMPTS]: failure.$metadata?.attempts ?? 1,
        [TG.RETRY_DELAY_MS]: failure.$metadata?.totalRetryDelay ?? 0,
      };
      if (failure.$metadata?.requestId) attributes[ATTR.AWS_REQUEST_ID] = failure.$metadata.requestId;
      if (failure.CancellationReasons) {
        const names = commandNotes?.actions ?? [];
        const reasons = failure.CancellationReasons.map(
          (reason, index) => `${names[index] ?? `#${index}`}=${reason.Code ?? 'None'}`,
        );
        attributes[TG.CANCELLATION_REASONS] = reasons;
        attributes[TG.CANCELLED_ACTIONS] = failure.CancellationReasons.flatMap((reason, index) =>
          reason.Code && reason.Code !== 'None' ? [names[index] ?? `#${index}`] : [],
        );
      }
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.name });
      finish(attributes);
      throw error;
    },
  );
}
