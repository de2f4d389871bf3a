/**
 * The in-process stream consumer of a server (STREAM_CONSUMER): it keeps soldCount up to date,
 * feeds the runtime's change events with every change of the table, and evicts the response
 * cache's entries a change touched. Kept out of src/runtime.ts so that the GraphQL Lambda, which
 * never consumes the stream (the stream Lambda does), does not bundle it.
 */
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { ConsumerFactory } from './runtime.js';
import { changedTagsOf } from './streams/changedTags.js';
import { traceInvalidation } from './telemetry/busSpans.js';
import { StreamConsumer } from './streams/consumer.js';

export interface InProcessConsumerOptions {
  client: DynamoDBStreamsClient;
  /** Names its checkpoints: one name per server instance. */
  consumerName: string;
  pollIntervalMs?: number | undefined;
  /** The public tags of every change go to the CDN purge hook too (CDN_PURGE_URL; src/streams/cdnPurge.ts). */
  purge?: ((tags: readonly string[]) => void) | undefined;
}

export function inProcessConsumer({
  client,
  consumerName,
  pollIntervalMs,
  purge,
}: InProcessConsumerOptions): ConsumerFactory {
  return ({ data, log, events, cache, metrics }) => {
    const consumer = new StreamConsumer({
      dynamo: data.dynamo,
      streams: client,
      tableName: data.tableName,
      consumerName,
      pollIntervalMs,
      publish: (event) => events.publish(event),
      onBatch: (batch) => metrics?.streamLag.set(batch.lagSeconds),
      onRecords:
        (cache || purge) &&
        ((records) => {
          const { tags, changedAtMs, traceparents } = changedTagsOf(records);
          if (tags.length === 0) return;
          if (cache) traceInvalidation(traceparents, tags.length, () => cache.invalidate(tags, changedAtMs));
          purge?.(tags);
        }),
      log: log.child({ component: 'streams' }),
    });
    if (cache) {
      // Proof that changes reach this instance: a batch read, or a round that found every shard drained.
      consumer.on('batch', () => cache.feed.beat());
      consumer.on('round', (round) => round.caughtUp && cache.feed.beat());
    }
    return consumer;
  };
}
