/**
 * The table's stream and its shards. A shard is an ordered run of records; when it closes
 * (DynamoDB rolls shards every few hours on AWS, and splits them with the table's partitions)
 * its children carry on, so records of one item are in order only along a shard's lineage.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';

export interface ShardInfo {
  shardId: string;
  parentShardId: string | undefined;
  /** Set once the shard is closed: no record will be added to it. */
  endingSequenceNumber: string | undefined;
}

/** DescribeStream returns at most 100 shards a page; a table has one open shard per partition. */
const MAX_SHARD_PAGES = 1000;

/** The ARN of the table's current stream; throws when the table has no stream enabled. */
export async function findStreamArn(client: DynamoDBClient, tableName: string): Promise<string> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const arn = Table?.LatestStreamArn;
  if (!arn || Table?.StreamSpecification?.StreamEnabled === false) {
    throw new Error(`table ${tableName} has no stream enabled (see src/table/definition.ts)`);
  }
  return arn;
}

/** Every shard of the stream that is still within its retention (24 hours on AWS), oldest first. */
export async function listShards(streams: DynamoDBStreamsClient, streamArn: string): Promise<ShardInfo[]> {
  const shards: ShardInfo[] = [];
  let start: string | undefined;
  for (let page = 0; page < MAX_SHARD_PAGES; page++) {
    const { StreamDescription } = await streams.send(
      new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }),
    );
    for (const shard of StreamDescription?.Shards ?? []) {
      if (!shard.ShardId) continue;
      shards.push({
        shardId: shard.ShardId,
        parentShardId: shard.ParentShardId,
        endingSequenceNumber: shard.SequenceNumberRange?.EndingSequenceNumber,
      });
    }
    start = StreamDescription?.LastEvaluatedShardId;
    if (!start) return shards;
  }
  throw new Error(`stream ${streamArn} lists more than ${MAX_SHARD_PAGES} pages of shards`);
}

/**
 * The shards that may be read now, in map order: unfinished ones whose parent, if still listed,
 * was read to its end. A child waits for its parent because records of one item are in order
 * only along a lineage; a parent trimmed from the stream holds nothing up.
 */
export function readyShards<S extends { readonly info: ShardInfo; readonly finished: boolean }>(
  shards: ReadonlyMap<string, S>,
): S[] {
  return [...shards.values()].filter((shard) => {
    if (shard.finished) return false;
    const parentId = shard.info.parentShardId;
    const parent = parentId === undefined ? undefined : shards.get(parentId);
    return parent === undefined || parent.finished;
  });
}
