/**
 * The in-process stream consumer of a server (STREAM_CONSUMER): it keeps soldCount up to date,
 * and its outputs (src/streams/streamOutputs.ts) go to this process: every change's events to
 * the runtime's change events, its tags to the response cache (and the CDN purge hook), its
 * heartbeats to the cache's feed. Kept out of src/runtime.ts so that the GraphQL Lambda, which
 * never consumes the stream (the stream Lambda does), does not bundle it.
 */
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { ResponseCache } from './pipeline/responseCache/responseCache.js';
import type { ConsumerFactory } from './runtime.js';
import { StreamConsumer } from './streams/consumer.js';
import { StreamOutputs } from './streams/streamOutputs.js';
import type { InvalidationOutput, PurgeOutput } from './streams/streamOutputs.js';
import { traceInvalidation } from './telemetry/busSpans.js';

export interface InProcessConsumerOptions {
  client: DynamoDBStreamsClient;
  /** Names its checkpoints: one name per server instance. */
  consumerName: string;
  pollIntervalMs?: number | undefined;
  /** The public tags of every change go to the CDN purge hook too (CDN_PURGE_URL; src/streams/cdnPurge.ts). */
  purge?: PurgeOutput | undefined;
}

/** Invalidations into this process's cache: evicted at once, and every heartbeat proves its feed live. */
export const localInvalidations = (cache: ResponseCache): InvalidationOutput => ({
  tags: ({ tags, changedAtMs, traceparents }) => {
    traceInvalidation(traceparents, tags.length, () => cache.invalidate(tags, changedAtMs));
    return true;
  },
  beat: () => cache.feed.beat(),
});

export function inProcessConsumer({
  client,
  consumerName,
  pollIntervalMs,
  purge,
}: InProcessConsumerOptions): ConsumerFactory {
  return ({ data, log, events, cache, metrics }) => {
    const outputs = new StreamOutputs({
      publish: (event) => events.publish(event),
      invalidations: cache && localInvalidations(cache),
      purge,
    });
    const consumer = new StreamConsumer({
      dynamo: data.dynamo,
      streams: client,
      tableName: data.tableName,
      consumerName,
      pollIntervalMs,
      publish: outputs.publish,
      onBatch: (batch) => metrics?.streamLag.set(batch.lagSeconds),
      onRecords: (records) => outputs.changed(records),
      log: log.child({ component: 'streams' }),
    });
    outputs.watch(consumer);
    return consumer;
  };
}
