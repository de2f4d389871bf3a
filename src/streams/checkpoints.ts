/**
 * Where a stream consumer got to, kept in the table itself: one item per (consumer, shard),
 * `META#stream / CONSUMER#<name>#SHARD#<shardId>`, holding the last sequence number whose
 * processing completed and whether the shard was read to its end. Written after a batch is
 * processed, never before, so a crash replays a batch rather than losing one (at least once).
 * A write never moves a checkpoint backwards, and a consumer on leases writes only under its
 * lease's fence (src/streams/leases.ts): a holder that stalled past its TTL cannot undo the
 * progress of the one that took over.
 *
 * A checkpoint names its stream: a table whose stream was disabled and enabled again has a
 * new stream with new shards, and an old checkpoint must not be mistaken for one of them.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { Transaction, transactWrite } from '../db/transact.js';
import { LeaseLostError } from './leases.js';
import type { Fence } from './leases.js';
import { EntityType } from '../table/codecs.js';
import { STREAM_CHECKPOINT_PK, streamCheckpointKey, streamCheckpointSKPrefix } from '../table/keys.js';

export interface ShardCheckpoint {
  shardId: string;
  /** The last record processed; undefined if none was yet. */
  sequenceNumber: string | undefined;
  /** The shard is closed and was read to its end: its children may be read. */
  finished: boolean;
}

const MAX_PAGES = 100;

/** A sequence number as a fixed-width string: compared as text, ordered as the number. */
export const positionOf = (sequenceNumber: string): string => sequenceNumber.padStart(40, '0');

export class CheckpointStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly consumerName: string,
    private readonly streamArn: string,
  ) {}

  /**
   * This consumer's checkpoints for this stream, by shard id (strongly consistent), and the
   * shard ids of its checkpoints for an earlier stream of the table (to forget).
   */
  async load(): Promise<{ checkpoints: Map<string, ShardCheckpoint>; otherStreams: string[] }> {
    const found = new Map<string, ShardCheckpoint>();
    const otherStreams: string[] = [];
    let start: Record<string, unknown> | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
          ExpressionAttributeValues: {
            ':pk': STREAM_CHECKPOINT_PK,
            ':prefix': streamCheckpointSKPrefix(this.consumerName),
          },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of result.Items ?? []) {
        if (typeof item.shardId !== 'string') continue;
        if (item.streamArn !== this.streamArn) {
          otherStreams.push(item.shardId);
          continue;
        }
        found.set(item.shardId, {
          shardId: item.shardId,
          sequenceNumber: typeof item.sequenceNumber === 'string' ? item.sequenceNumber : undefined,
          finished: item.finished === true,
        });
      }
      start = result.LastEvaluatedKey;
      if (!start) return { checkpoints: found, otherStreams };
    }
    throw new Error(`more than ${MAX_PAGES} pages of stream checkpoints for consumer ${this.consumerName}`);
  }

  /**
   * The checkpoint of one shard (strongly consistent), undefined when there is none for this
   * stream: what a consumer that just took the shard's lease resumes from.
   */
  async loadOne(shardId: string): Promise<ShardCheckpoint | undefined> {
    const { Item: item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: streamCheckpointKey(this.consumerName, shardId),
        ConsistentRead: true,
      }),
    );
    if (!item || item.streamArn !== this.streamArn) return undefined;
    return {
      shardId,
      sequenceNumber: typeof item.sequenceNumber === 'string' ? item.sequenceNumber : undefined,
      finished: item.finished === true,
    };
  }

  /**
   * The put that writes `checkpoint` unless the stored one is further on: a checkpoint never
   * moves backwards. Sequence numbers are decimal strings of 21 to 40 digits; `position` is the
   * same number zero-padded to 40, so that DynamoDB compares them as numbers.
   */
  saveParams(checkpoint: ShardCheckpoint): PutCommandInput {
    const position = checkpoint.sequenceNumber === undefined ? undefined : positionOf(checkpoint.sequenceNumber);
    return {
      TableName: this.tableName,
      Item: {
        ...streamCheckpointKey(this.consumerName, checkpoint.shardId),
        entityType: EntityType.Meta,
        consumerName: this.consumerName,
        streamArn: this.streamArn,
        shardId: checkpoint.shardId,
        ...(checkpoint.sequenceNumber === undefined ? {} : { sequenceNumber: checkpoint.sequenceNumber, position }),
        finished: checkpoint.finished,
        updatedAt: new Date().toISOString(),
      },
      // Another stream's checkpoint (the stream was re-enabled) is replaced whatever its position.
      ConditionExpression:
        position === undefined
          ? 'attribute_not_exists(#position) OR streamArn <> :arn'
          : 'attribute_not_exists(#position) OR #position <= :position OR streamArn <> :arn',
      ExpressionAttributeNames: { '#position': 'position' },
      ExpressionAttributeValues: {
        ':arn': this.streamArn,
        ...(position === undefined ? {} : { ':position': position }),
      },
    };
  }

  /**
   * Writes `checkpoint`, under `fence` when given (in one transaction with the lease's
   * condition). Resolves `saved`, or `behind` when the stored checkpoint is further on (nothing
   * written). Rejects with LeaseLostError when the fence's tenure is over (nothing written).
   */
  async save(checkpoint: ShardCheckpoint, fence?: Fence): Promise<'saved' | 'behind'> {
    const put = this.saveParams(checkpoint);
    if (!fence) {
      try {
        await this.doc.send(new PutCommand(put));
        return 'saved';
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return 'behind';
        throw error;
      }
    }
    const transaction = new Transaction().add('fence', fence.condition).add('checkpoint', { Put: put });
    const outcome = await transactWrite(this.doc, transaction);
    if (outcome.committed) return 'saved';
    if (outcome.cancellation.failed('fence')) throw new LeaseLostError(fence.tenure);
    if (outcome.cancellation.failed('checkpoint')) return 'behind';
    throw new Error(`checkpoint transaction cancelled: ${outcome.cancellation.describe()}`);
  }

  /**
   * Deletes the checkpoints of shards that left the stream (trimmed after 24 hours on AWS), so
   * the partition does not grow with every shard ever read. Unprocessed deletes are left for
   * the next call: a stale checkpoint is only clutter.
   */
  async forget(shardIds: readonly string[]): Promise<void> {
    for (let i = 0; i < shardIds.length; i += 25) {
      const keys = shardIds.slice(i, i + 25).map((shardId) => streamCheckpointKey(this.consumerName, shardId));
      await this.doc.send(
        new BatchWriteCommand({
          RequestItems: { [this.tableName]: keys.map((Key) => ({ DeleteRequest: { Key } })) },
        }),
      );
    }
  }
}
