/**
 * What the table's stream means to the application, shared by the in-process consumer
 * (src/streams/consumer.ts) and the Lambda handler (src/lambda/streams.ts).
 *
 * A record's key names its kind (the declarations' templates: src/table/entities/registry.ts),
 * and a kind whose declaration has change events (src/table/entities/events.ts) says what the
 * record means: its images, decoded by the kind's codec, become an event or nothing. Only the
 * item that speaks for a node declares events (an order's details, not the copy in its user's
 * partition, which carries the same change). Each event may then have derived data to keep,
 * decided by a switch over the event kinds that the typecheck holds exhaustive:
 * - an order placed: soldCount + quantity of each line (unless the order arrives CANCELLED),
 *   and the order in its user's buyer record of each product (what a review's verifiedPurchase reads);
 * - an order's status moving into CANCELLED: soldCount - quantity, and the order out of the buyer records;
 * - a review added: nothing (its product's rating moved in the review's transaction).
 *
 * Delivery is at least once: the soldCount changes are idempotent (sale markers, see
 * soldCount.ts), events may be published again for a redelivered record (each API instance drops a
 * repeated `seq`).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Logger } from 'pino';
import { changeEventOf, eventsOfEntity } from '../events/changeEvent.js';
import type { ChangeEvent } from '../events/changeEvent.js';
import { CorruptItemError } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { unreachable } from '../table/entities/entity.js';
import type { ChangeName } from '../table/entities/events.js';
import { EventFieldError } from '../table/entities/events.js';
import { matchKey } from '../table/entities/registry.js';
import { InvalidKeyError } from '../table/keys.js';
import { PublishInOrder } from './publishInOrder.js';
import type { Applied } from './publishInOrder.js';
import { startRecordTrace } from './recordTrace.js';
import type { RecordTrace } from './recordTrace.js';
import type { Fence } from './leases.js';
import type { Sale, TransactionTiming } from './soldCount.js';
import { applySales } from './soldCountBatch.js';

/**
 * One stream record, in the shape both sources share: `_Record` of @aws-sdk/client-dynamodb-streams
 * (ApproximateCreationDateTime a Date) and `DynamoDBRecord` of a Lambda event (epoch seconds).
 * Images are AttributeValue maps.
 */
export interface ChangeRecord {
  eventID?: string | undefined;
  eventName?: string | undefined;
  dynamodb?:
    | {
        ApproximateCreationDateTime?: Date | number | undefined;
        Keys?: Record<string, unknown> | undefined;
        NewImage?: Record<string, unknown> | undefined;
        OldImage?: Record<string, unknown> | undefined;
        SequenceNumber?: string | undefined;
      }
    | undefined;
}

export type PublishChangeEvent = (event: ChangeEvent) => void | Promise<void>;

export type StreamLog = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

export interface ProcessorDeps {
  doc: DynamoDBDocumentClient;
  tableName: string;
  /** Called once per event, after the record's soldCount change is durable. A throw fails the record. */
  publish?: PublishChangeEvent | undefined;
  log?: StreamLog | undefined;
  /** At most this many order lines per soldCount transaction (tests); default as many as fit in one. */
  maxLinesPerTransaction?: number | undefined;
  /**
   * The lease tenure the records are read under: every soldCount transaction is conditioned on
   * it. Once a write is refused for it (LeaseLostError, in `failures`) nothing more is applied.
   */
  fence?: Fence | undefined;
  /** Told of each soldCount transaction once it is answered, before the events it applied are published. */
  onTransaction?: ((timing: TransactionTiming) => void) | undefined;
}

export interface RecordFailure {
  /** Position in the batch. */
  index: number;
  sequenceNumber: string;
  error: unknown;
}

export interface ProcessResult {
  records: number;
  /** The batch's events, in the order they were published (or would have been, without `publish`). */
  events: ChangeEvent[];
  /** Products whose soldCount changed (one per order line applied now). */
  soldCountChanges: number;
  /**
   * Records that failed, in batch order. Everything before the first one was applied; a retry
   * resumes AT the first one (later records may have been applied too: they are idempotent).
   */
  failures: RecordFailure[];
  /** Records that can never be processed (an item of the wrong shape for its kind): logged and passed over. */
  skipped: number;
  /**
   * Records whose soldCount change had been applied already: redeliveries (a replay after a crash
   * or a lease hand-over). Only records that move soldCount can be recognised as such.
   */
  duplicates: number;
  /** The soldCount transactions sent, in order: their lines, actions and round trip (stage figures). */
  transactions: TransactionTiming[];
}

/** A record whose event moves soldCount: applied with the page's others (soldCountBatch.ts). */
interface PendingSale {
  index: number;
  sale: Sale;
  applied: Applied;
  doc: DynamoDBDocumentClient | undefined;
}

/**
 * Applies a batch of stream records (in stream order). Every record's event is decoded first;
 * the soldCount changes of the whole batch then go out together, in as few transactions as fit
 * (soldCountBatch.ts), one after the other in record order, so the changes of one item keep
 * their order. Never throws for a record: failures are returned for the caller to retry.
 *
 * The events are published in the batch's order (PublishInOrder), each once its own record and
 * every earlier one are applied: an event that moves no counter waits for the transaction of an
 * earlier order. A topic's events reach the subscribers, and its history, in the order of their
 * sequence numbers, which is what a client resuming after an event id relies on. No event
 * after a failed record is published: the retry starts at that record and publishes them, in
 * order, then.
 */
export async function processRecords(records: readonly ChangeRecord[], deps: ProcessorDeps): Promise<ProcessResult> {
  const result: ProcessResult = {
    records: records.length,
    events: [],
    soldCountChanges: 0,
    failures: [],
    skipped: 0,
    duplicates: 0,
    transactions: [],
  };
  const inOrder = new PublishInOrder(records.map(sequenceOf), deps.publish, result);
  const sales: PendingSale[] = [];
  /** Records from the first one that failed on are not applied (the retry starts there). */
  const fail = (index: number, error: unknown, first: boolean) => {
    inOrder.failed(index);
    if (first) result.failures.push({ index, sequenceNumber: sequenceOf(records[index] as ChangeRecord), error });
  };
  for (const [index, record] of records.entries()) {
    let event: ChangeEvent | null;
    try {
      event = eventOf(record);
    } catch (error) {
      if (error instanceof CorruptItemError || error instanceof InvalidKeyError || error instanceof EventFieldError) {
        // Retrying cannot fix foreign data; blocking the shard on it would stop every later change.
        result.skipped++;
        inOrder.ready(index, null);
        deps.log?.warn(
          { err: error, sequenceNumber: sequenceOf(record) },
          'stream record skipped: not a valid item of its kind',
        );
        continue;
      }
      fail(index, error, true);
      break;
    }
    if (!event) {
      inOrder.ready(index, null);
      continue;
    }
    const traced = startRecordTrace(deps.doc, record, event);
    const applied = appliedOf(event, traced);
    const sale = saleOf(event);
    if (sale) sales.push({ index, sale, applied, doc: traced?.doc });
    else inOrder.ready(index, applied);
  }
  const done = new Set<number>();
  try {
    await applySales(
      deps.doc,
      deps.tableName,
      sales.map((pending) => pending.sale),
      {
        fence: deps.fence,
        maxLines: deps.maxLinesPerTransaction,
        docOf: (sale) => sales[sale]?.doc,
        onTransaction: (timing) => {
          result.transactions.push(timing);
          deps.onTransaction?.(timing);
        },
        onApplied: (sale, outcome) => {
          const pending = sales[sale] as PendingSale;
          done.add(sale);
          result.soldCountChanges += outcome.changed;
          if (outcome.changed === 0 && outcome.unchanged > 0) result.duplicates++;
          inOrder.ready(pending.index, pending.applied);
        },
      },
    );
  } catch (error) {
    // This transaction's sales and every later one were not applied: the first is the failure
    // the retry starts at, the others are held back with it.
    let first = true;
    for (const [sale, pending] of sales.entries()) {
      if (done.has(sale)) continue;
      pending.applied.finish(error);
      fail(pending.index, error, first);
      first = false;
    }
  }
  await inOrder.settled();
  result.failures.sort((a, b) => a.index - b.index);
  return result;
}

/** A decoded record's event, for PublishInOrder to send, with its trace to end once it is. */
function appliedOf(event: ChangeEvent, traced: RecordTrace | undefined): Applied {
  const finish = (error?: unknown) =>
    error === undefined
      ? traced?.trace.finish()
      : traced?.trace.finish({}, error instanceof Error ? error.name : 'Error');
  return { event: traced ? { ...event, traceparent: traced.trace.traceparent } : event, finish };
}

/**
 * The soldCount change an event asks for, applied before it is published (a subscriber that
 * reads `soldCount` after ORDER_PLACED sees the order counted), or null. A kind of event
 * without a case here does not compile.
 */
function saleOf(event: ChangeEvent): Sale | null {
  switch (event.entity) {
    case 'Order': {
      const order = event.node;
      const target =
        event.type === 'ORDER_PLACED'
          ? order.status === 'CANCELLED'
            ? null
            : 'SOLD'
          : order.status === 'CANCELLED'
            ? 'CANCELLED'
            : null;
      return target && { order, target };
    }
    case 'Review':
      // Its rating moved in the review's own transaction: nothing is derived from the stream.
      return null;
    default:
      return unreachable(event);
  }
}

const CHANGE_NAMES: readonly string[] = ['INSERT', 'MODIFY', 'REMOVE'] satisfies ChangeName[];

/**
 * The event a record means, by the declaration of its item's kind; null for a kind without
 * events (stock, profiles, markers: most records) or a change that is no event.
 */
function eventOf(record: ChangeRecord): ChangeEvent | null {
  const stream = record.dynamodb;
  const keys = keyOf(record);
  if (!keys || !CHANGE_NAMES.includes(record.eventName ?? '')) return null;
  // The key alone says the kind: nothing is unmarshalled for the records of other kinds.
  const match = matchKey(keys);
  const source = match?.kind === 'item' ? eventsOfEntity(match.entity) : undefined;
  if (!source) return null;
  const decode = (image: Record<string, unknown> | undefined) => {
    const item = imageOf(image);
    return item ? source.entity.codec.fromItem(item) : null;
  };
  return changeEventOf(
    source,
    { name: record.eventName as ChangeName, before: decode(stream?.OldImage), after: decode(stream?.NewImage) },
    { seq: sequenceOf(record), at: timeOf(stream?.ApproximateCreationDateTime) },
  );
}

function imageOf(image: Record<string, unknown> | undefined): Item | undefined {
  if (!image || Object.keys(image).length === 0) return undefined;
  // The Lambda and SDK AttributeValue types differ only in how binary values travel; we store none.
  return unmarshall(image as Record<string, AttributeValue>);
}

/** PK and SK of the record's item. */
function keyOf(record: ChangeRecord): { PK: string; SK: string } | undefined {
  const keys = record.dynamodb?.Keys ?? record.dynamodb?.NewImage ?? record.dynamodb?.OldImage;
  const PK = (keys?.PK as { S?: string } | undefined)?.S;
  const SK = (keys?.SK as { S?: string } | undefined)?.S;
  return PK === undefined || SK === undefined ? undefined : { PK, SK };
}

const sequenceOf = (record: ChangeRecord): string => record.dynamodb?.SequenceNumber ?? '';

/** Lambda sends epoch seconds, the SDK a Date; both are whole seconds at best. */
function timeOf(value: Date | number | undefined): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number') return new Date(value * 1000).toISOString();
  return new Date().toISOString();
}
