/** Reading a table's stream as a test sees it, and turning records into a Lambda event. */
import { GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import type { _Record, DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { findStreamArn, listShards } from '../../src/streams/shards.js';

/** Every record the table's stream holds now, shard by shard from TRIM_HORIZON. */
export async function readStream(
  client: DynamoDBClient,
  streams: DynamoDBStreamsClient,
  tableName: string,
): Promise<{ streamArn: string; records: _Record[] }> {
  const streamArn = await findStreamArn(client, tableName);
  const records: _Record[] = [];
  for (const shard of await listShards(streams, streamArn)) {
    let { ShardIterator: iterator } = await streams.send(
      new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shard.shardId, ShardIteratorType: 'TRIM_HORIZON' }),
    );
    for (let page = 0; iterator && page < 100; page++) {
      const result = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      if (!result.Records?.length) break;
      records.push(...result.Records);
      iterator = result.NextShardIterator;
    }
  }
  return { streamArn, records };
}

/** The records as a Lambda event: JSON, with the time in epoch seconds, the images as they are. */
export function lambdaEvent(records: _Record[], streamArn: string): DynamoDBStreamEvent {
  return JSON.parse(
    JSON.stringify({
      Records: records.map((record) => ({
        ...record,
        eventSourceARN: streamArn,
        dynamodb: {
          ...record.dynamodb,
          ApproximateCreationDateTime: (record.dynamodb?.ApproximateCreationDateTime?.getTime() ?? 0) / 1000,
        },
      })),
    }),
  ) as DynamoDBStreamEvent;
}
