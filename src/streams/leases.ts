/**
 * Shard leases: which of several consumers sharing one `consumerName` reads a shard now (the
 * KCL model, kept in the single table). One item per shard,
 * `META#stream / LEASE#<consumerName>#SHARD#<shardId>`, holding its owner and when it expires.
 *
 * - Taken with a conditional put that succeeds only if nobody holds the shard, the lease has
 *   expired, or the taker already holds it.
 * - Renewed by heartbeat (a conditional update on the owner) every third of the TTL; a renewal
 *   whose condition fails means another consumer took the shard: stop reading it.
 * - Released (a conditional delete) on a clean stop, so a successor need not wait for expiry.
 *
 * The owner resumes from the shared checkpoint (src/streams/checkpoints.ts). A lease is not a
 * fence: a holder that stalls past its TTL may finish a batch the new holder also processes.
 * That is the at-least-once delivery the processing is built for (sale markers make soldCount
 * exact; events may be published twice). Expiry compares the consumers' clocks: keep them in
 * sync (NTP) and the TTL well above the skew.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type {
  DeleteCommandInput,
  DynamoDBDocumentClient,
  PutCommandInput,
  UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { EntityType } from '../table/codecs.js';
import { streamLeaseKey } from '../table/keys.js';

export interface LeaseOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  consumerName: string;
  /** This consumer, unique among the running ones (host, pid and a random part). */
  owner: string;
  /** How long a lease lasts without a heartbeat. */
  ttlMs: number;
}

export class LeaseStore {
  constructor(private readonly options: LeaseOptions) {}

  get owner(): string {
    return this.options.owner;
  }

  /** The put that takes `shardId`'s lease at `now` (ms) if it is free, expired or ours. */
  acquireParams(shardId: string, now: number): PutCommandInput {
    const { tableName, consumerName, owner, ttlMs } = this.options;
    return {
      TableName: tableName,
      Item: {
        ...streamLeaseKey(consumerName, shardId),
        entityType: EntityType.Meta,
        consumerName,
        shardId,
        owner,
        expiresAt: now + ttlMs,
        acquiredAt: new Date(now).toISOString(),
      },
      ConditionExpression: 'attribute_not_exists(PK) OR expiresAt < :now OR #owner = :owner',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':now': now, ':owner': owner },
    };
  }

  /** The update that extends our lease on `shardId`; fails unless we still own it. */
  renewParams(shardId: string, now: number): UpdateCommandInput {
    const { tableName, consumerName, owner, ttlMs } = this.options;
    return {
      TableName: tableName,
      Key: streamLeaseKey(consumerName, shardId),
      UpdateExpression: 'SET expiresAt = :expiresAt',
      ConditionExpression: '#owner = :owner',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':expiresAt': now + ttlMs, ':owner': owner },
    };
  }

  releaseParams(shardId: string): DeleteCommandInput {
    const { tableName, consumerName, owner } = this.options;
    return {
      TableName: tableName,
      Key: streamLeaseKey(consumerName, shardId),
      ConditionExpression: '#owner = :owner',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':owner': owner },
    };
  }

  /** True when we hold the lease now; false when another consumer does. Other errors reject. */
  acquire(shardId: string, now = Date.now()): Promise<boolean> {
    return this.conditional(new PutCommand(this.acquireParams(shardId, now)));
  }

  /** True when the lease was extended; false when it is no longer ours. */
  renew(shardId: string, now = Date.now()): Promise<boolean> {
    return this.conditional(new UpdateCommand(this.renewParams(shardId, now)));
  }

  /** Gives the lease up if it is still ours. */
  async release(shardId: string): Promise<void> {
    await this.conditional(new DeleteCommand(this.releaseParams(shardId)));
  }

  private async conditional(command: PutCommand | UpdateCommand | DeleteCommand): Promise<boolean> {
    try {
      await this.options.doc.send(command as PutCommand);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
