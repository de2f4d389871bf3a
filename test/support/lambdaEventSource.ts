/**
 * What Lambda's event source mapping does for the stream function, done on DynamoDB Local: it
 * polls every shard of the table's stream and invokes the handler with each batch of records
 * as a Lambda event (streamRecords.ts's `lambdaEvent`), one batch at a time per shard, in stream
 * order; a batch that answers a failed record is invoked again from that record, as
 * ReportBatchItemFailures does. The handler is the real one; only the poller is the test's.
 * Like the real mapping, it does not invoke the function while the stream is idle.
 */
import { GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamsClient, ShardIteratorType } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { StreamLambdaHandler } from '../../src/lambda/streams.js';
import { findStreamArn, listShards } from '../../src/streams/shards.js';
import { lambdaEvent } from './streamRecords.js';

export interface LambdaEventSourceOptions {
  client: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  tableName: string;
  handler: StreamLambdaHandler;
  /** Pause after an empty poll of a shard (the real mapping polls about four times a second). */
  pollMs?: number;
  /** Records per invocation at most (the mapping's BatchSize). */
  batchSize?: number;
}

export class LambdaEventSource {
  /** Invocations of the handler, and batches it answered with a failed record. */
  invocations = 0;
  retried = 0;
  private stopped = false;
  private readonly loops: Promise<void>[] = [];

  private constructor(private readonly options: LambdaEventSourceOptions) {}

  /** Starts polling every shard from the oldest record it holds. */
  static async start(options: LambdaEventSourceOptions): Promise<LambdaEventSource> {
    const source = new LambdaEventSource(options);
    const streamArn = await findStreamArn(options.client, options.tableName);
    for (const shard of await listShards(options.streams, streamArn)) {
      source.loops.push(source.poll(streamArn, shard.shardId));
    }
    return source;
  }

  /** Stops polling; resolves once the invocation under way (if any) has returned. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async iterator(streamArn: string, shardId: string, type: ShardIteratorType, at?: string) {
    const { ShardIterator } = await this.options.streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ShardIteratorType: type,
        SequenceNumber: at,
      }),
    );
    return ShardIterator;
  }

  private async poll(streamArn: string, shardId: string): Promise<void> {
    const { streams, handler, pollMs = 100, batchSize = 100 } = this.options;
    let iterator = await this.iterator(streamArn, shardId, 'TRIM_HORIZON');
    while (iterator && !this.stopped) {
      const { Records = [], NextShardIterator } = await streams.send(
        new GetRecordsCommand({ ShardIterator: iterator, Limit: batchSize }),
      );
      if (Records.length === 0) {
        iterator = NextShardIterator;
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        continue;
      }
      this.invocations++;
      const { batchItemFailures = [] } = (await handler(lambdaEvent(Records, streamArn))) ?? {};
      const failed = batchItemFailures[0]?.itemIdentifier;
      if (failed) {
        this.retried++;
        iterator = await this.iterator(streamArn, shardId, 'AT_SEQUENCE_NUMBER', failed);
      } else iterator = NextShardIterator;
    }
  }
}
