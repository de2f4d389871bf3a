/**
 * What the table's stream means to the application, shared by the in-process consumer
 * (src/streams/consumer.ts) and the Lambda handler (src/lambda/streams.ts).
 *
 * Only order details items (`ORDER#<id>/DETAILS`, entityType Order) matter: the copy in the
 * user's partition carries the same change, and counting both would count each order twice.
 * - INSERT: soldCount + quantity of each line (unless the order arrives CANCELLED), ORDER_PLACED.
 * - MODIFY that changes the status: ORDER_STATUS_CHANGED; into CANCELLED, soldCount - quantity.
 * - REMOVE: nothing (deleting an order is not a cancellation).
 *
 * Delivery is at least once: the soldCount changes are idempotent (sale markers, see
 * soldCount.ts), events may be published again for a redelivered record (each API instance drops a
 * repeated `seq`).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Logger } from 'pino';
import type { OrderEventModel } from '../events/orderEvent.js';
import { CorruptItemError, EntityType, itemToOrder } from '../table/codecs.js';
import type { Item } from '../table/codecs.js';
import { InvalidKeyError } from '../table/keys.js';
import { startRecordTrace } from './recordTrace.js';
import { LeaseLostError } from './leases.js';
import type { Fence } from './leases.js';
import { updateSoldCount } from './soldCount.js';

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

export type PublishOrderEvent = (event: OrderEventModel) => void | Promise<void>;

export type StreamLog = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

export interface ProcessorDeps {
  doc: DynamoDBDocumentClient;
  tableName: string;
  /** Called once per event, after the record's soldCount change is durable. A throw fails the record. */
  publish?: PublishOrderEvent | undefined;
  log?: StreamLog | undefined;
  /** How many items' records are processed at once (records of one item always in order). Default DEFAULT_CONCURRENCY. */
  concurrency?: number | undefined;
  /**
   * The lease tenure the records are read under: every soldCount transaction is conditioned on
   * it. Once a write is refused for it (LeaseLostError, in `failures`) nothing more is applied.
   */
  fence?: Fence | undefined;
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
  events: OrderEventModel[];
  /** Products whose soldCount changed (one per order line applied now). */
  soldCountChanges: number;
  /**
   * Records that failed, in batch order. Everything before the first one was applied; a retry
   * resumes AT the first one (later records may have been applied too: they are idempotent).
   */
  failures: RecordFailure[];
  /** Records that can never be processed (an order item of the wrong shape): logged and passed over. */
  skipped: number;
  /**
   * Records whose soldCount change had been applied already: redeliveries (a replay after a crash
   * or a lease hand-over). Only records that move soldCount can be recognised as such.
   */
  duplicates: number;
}

const DEFAULT_CONCURRENCY = 8;

/**
 * Applies a batch of stream records (in stream order). Records of one item are handled in order,
 * records of different items concurrently; a failed record stops its item's later records in
 * this batch. Never throws for a record: failures are returned for the caller to retry.
 */
export async function processRecords(records: readonly ChangeRecord[], deps: ProcessorDeps): Promise<ProcessResult> {
  const result: ProcessResult = {
    records: records.length,
    events: [],
    soldCountChanges: 0,
    failures: [],
    skipped: 0,
    duplicates: 0,
  };
  const groups = new Map<string, number[]>();
  records.forEach((record, index) => {
    const key = itemKeyOf(record) ?? `#${index}`;
    const group = groups.get(key);
    if (group) group.push(index);
    else groups.set(key, [index]);
  });

  const queue = [...groups.values()];
  let fenced = false;
  const worker = async () => {
    for (let group = queue.shift(); group && !fenced; group = queue.shift()) {
      for (const index of group) {
        if (fenced) break;
        const record = records[index] as ChangeRecord;
        try {
          await processRecord(record, deps, result);
        } catch (error) {
          if (error instanceof CorruptItemError || error instanceof InvalidKeyError) {
            // Retrying cannot fix foreign data; blocking the shard on it would stop every later change.
            result.skipped++;
            deps.log?.warn(
              { err: error, sequenceNumber: sequenceOf(record) },
              'stream record skipped: not a valid order',
            );
            continue;
          }
          if (error instanceof LeaseLostError) fenced = true;
          result.failures.push({ index, sequenceNumber: sequenceOf(record), error });
          break; // later changes of this item wait for this one (their order matters to subscribers)
        }
      }
    }
  };
  const workers = Math.max(1, Math.min(deps.concurrency ?? DEFAULT_CONCURRENCY, queue.length));
  await Promise.all(Array.from({ length: workers }, worker));
  result.failures.sort((a, b) => a.index - b.index);
  return result;
}

async function processRecord(record: ChangeRecord, deps: ProcessorDeps, result: ProcessResult): Promise<void> {
  const change = orderChangeOf(record);
  if (!change) return;
  const traced = startRecordTrace(deps.doc, record, change.event.type, change.event.order.orderId);
  try {
    if (change.soldCount) {
      const doc = traced?.doc ?? deps.doc;
      const outcome = await updateSoldCount(
        doc,
        deps.tableName,
        change.event.order,
        change.soldCount,
        undefined,
        deps.fence,
      );
      result.soldCountChanges += outcome.changed;
      if (outcome.changed === 0 && outcome.unchanged > 0) result.duplicates++;
    }
    if (change.publish) {
      const event = traced ? { ...change.event, traceparent: traced.trace.traceparent } : change.event;
      await deps.publish?.(event);
      result.events.push(event);
    }
    traced?.trace.finish();
  } catch (error) {
    traced?.trace.finish({}, error instanceof Error ? error.name : 'Error');
    throw error;
  }
}

interface OrderChange {
  event: OrderEventModel;
  publish: boolean;
  soldCount: 'SOLD' | 'CANCELLED' | null;
}

/** What a record means for orders, or null when it is about anything else. */
function orderChangeOf(record: ChangeRecord): OrderChange | null {
  const stream = record.dynamodb;
  // Most records are about other items (stock, profiles, markers): look before unmarshalling.
  const entityType = (stream?.NewImage?.entityType ?? stream?.OldImage?.entityType) as { S?: string } | undefined;
  if (entityType?.S !== EntityType.Order) return null;
  const newItem = imageOf(stream?.NewImage);
  const oldItem = imageOf(stream?.OldImage);
  if (!newItem || (record.eventName !== 'INSERT' && record.eventName !== 'MODIFY')) return null;
  const order = itemToOrder(newItem);
  const base = { order, seq: sequenceOf(record), at: timeOf(stream?.ApproximateCreationDateTime) };
  if (record.eventName === 'INSERT') {
    return {
      event: { type: 'ORDER_PLACED', previousStatus: null, ...base },
      publish: true,
      soldCount: order.status === 'CANCELLED' ? null : 'SOLD',
    };
  }
  // Without an old image (a stream that is not NEW_AND_OLD_IMAGES) treat every MODIFY as a
  // status change: the sale markers make a repeated cancellation harmless.
  const previousStatus = oldItem ? itemToOrder(oldItem).status : null;
  if (previousStatus === order.status) return null;
  return {
    event: { type: 'ORDER_STATUS_CHANGED', previousStatus, ...base },
    publish: true,
    soldCount: order.status === 'CANCELLED' ? 'CANCELLED' : null,
  };
}

function imageOf(image: Record<string, unknown> | undefined): Item | undefined {
  if (!image || Object.keys(image).length === 0) return undefined;
  // The Lambda and SDK AttributeValue types differ only in how binary values travel; we store none.
  return unmarshall(image as Record<string, AttributeValue>);
}

/** PK and SK of the record's item, so that records of one item stay in order. */
function itemKeyOf(record: ChangeRecord): string | undefined {
  const keys = record.dynamodb?.Keys ?? record.dynamodb?.NewImage ?? record.dynamodb?.OldImage;
  const pk = (keys?.PK as { S?: string } | undefined)?.S;
  const sk = (keys?.SK as { S?: string } | undefined)?.S;
  return pk === undefined || sk === undefined ? undefined : `${pk}\n${sk}`;
}

const sequenceOf = (record: ChangeRecord): string => record.dynamodb?.SequenceNumber ?? '';

/** Lambda sends epoch seconds, the SDK a Date; both are whole seconds at best. */
function timeOf(value: Date | number | undefined): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number') return new Date(value * 1000).toISOString();
  return new Date().toISOString();
}
