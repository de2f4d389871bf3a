/**
 * The options of a stream consumer (src/streams/consumer.ts) and their defaults.
 *
 * Where a brand-new consumer (no checkpoint at all) starts is `initialPosition`. The default is
 * TRIM_HORIZON, the oldest record still in the stream (24 hours on AWS): soldCount must count
 * every order, and replaying old records is harmless (sale markers). LATEST skips the history,
 * so orders placed before the first start would never be counted; it suits a consumer that only
 * feeds live subscriptions. (With LATEST, until a first record is checkpointed a restart starts
 * at LATEST again.) Shards that appear later, and shards without a checkpoint of a consumer that
 * has checkpoints, are always read from TRIM_HORIZON.
 */
import type { _Record, DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { Dynamo } from '../db/client.js';
import type { BatchReport } from './consumerEvents.js';
import type { PublishChangeEvent, StreamLog } from './processor.js';

/** New shards appear when DynamoDB splits or rolls one over: looked for this often. */
export const SHARD_REFRESH_MS = 10_000;
/** GetRecords returns at most this many records per call. */
export const MAX_BATCH_SIZE = 1000;
/** After a failed read: retried soon, then no more than every 5 s while DynamoDB keeps failing. */
export const ERROR_BACKOFF = { baseDelayMs: 100, maxDelayMs: 5000 };

export interface StreamConsumerOptions {
  /** The table's clients: DescribeTable, the processing's writes and the checkpoints. */
  dynamo: Dynamo;
  /** See createStreamsClient (src/streams/streamsClient.ts). Not destroyed by stop(). */
  streams: DynamoDBStreamsClient;
  tableName: string;
  publish?: PublishChangeEvent | undefined;
  /** Names this consumer's checkpoints; default `default`. */
  consumerName?: string | undefined;
  /** Where a consumer without any checkpoint starts; default TRIM_HORIZON (see the top of this file). */
  initialPosition?: 'TRIM_HORIZON' | 'LATEST' | undefined;
  /** Pause between polls while every shard is idle; default: STREAM_POLL_MS's. */
  pollIntervalMs?: number | undefined;
  /** How often the shard list is read again (also after any shard ends); default SHARD_REFRESH_MS. */
  shardRefreshMs?: number | undefined;
  /** GetRecords Limit; default GetRecords' maximum (MAX_BATCH_SIZE). */
  batchSize?: number | undefined;
  /** Backoff after an error, per shard; attempts never run out. Default ERROR_BACKOFF. */
  backoff?: { baseDelayMs: number; maxDelayMs: number } | undefined;
  log?: StreamLog | undefined;
  /**
   * Share the shards with other consumers of the same `consumerName` through leases
   * (src/streams/leases.ts): each shard is read by the one consumer holding its lease, which
   * resumes from the shared checkpoint. Without it this consumer reads every shard alone.
   */
  leases?:
    | {
        owner: string;
        ttlMs: number;
        /**
         * The client of the lease reads and writes; default `dynamo`. Give it one whose retries
         * suit the TTL (leaseRetryStrategy in src/streams/leases.ts), as `npm run consumer` does.
         */
        dynamo?: Dynamo | undefined;
      }
    | undefined;
  /**
   * Called with each batch of records as read, before they are processed (the response cache
   * evicts what they change); a throw is logged and ignored.
   */
  onRecords?: ((records: readonly _Record[]) => void) | undefined;
  /** Called after each batch with records (metrics, tests); a throw is logged and ignored. */
  onBatch?: ((batch: BatchReport) => void) | undefined;
}
