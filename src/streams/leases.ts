/**
 * Shard leases: which of several consumers sharing one `consumerName` reads a shard now (the
 * KCL model, kept in the single table). One item per shard,
 * `META#stream / LEASE#<consumerName>#SHARD#<shardId>`, holding its owner, when it expires and
 * its epoch.
 *
 * - Taken with a conditional update that succeeds only if nobody holds the shard, the lease has
 *   expired, or the taker already holds it (or, to balance, from a named holder at a named
 *   epoch). Every acquisition adds one to the epoch, which is never reset (a release keeps the
 *   item): the pair (owner, epoch) names one tenure of the lease, the fence.
 * - Renewed by heartbeat (conditional on owner and epoch); a renewal whose condition fails means
 *   another consumer took the shard: stop reading it.
 * - Released (owner removed, expired at once) on a clean stop, so a successor need not wait.
 *
 * The fence makes a lease safe against a holder that stalls past its TTL (a GC pause, SIGSTOP, a
 * slow network): every side effect of processing a shard is a DynamoDB write conditioned on the
 * tenure still being current (`fenceCondition`), so a holder that wakes up after losing its lease
 * applies nothing; its next write fails with LeaseLostError. Expiry compares the consumers'
 * clocks (keep them in sync and the TTL well above the skew); fencing does not: a skewed clock
 * costs a needless hand-over, never a double write.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { EntityType } from '../table/codecs.js';
import {
  STREAM_CHECKPOINT_PK,
  streamLeaseKey,
  streamLeaseSKPrefix,
  streamWorkerKey,
  streamWorkerSKPrefix,
} from '../table/keys.js';
import type { TransactItem } from '../db/transact.js';

export interface LeaseOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  consumerName: string;
  /** This consumer, unique among the running ones (host, pid and a random part). */
  owner: string;
  /** How long a lease lasts without a heartbeat. */
  ttlMs: number;
}

/** One tenure of a shard's lease: what every side effect of reading the shard is conditioned on. */
export interface Tenure {
  shardId: string;
  owner: string;
  epoch: number;
}

/** A tenure and the transaction action that holds a write to it. */
export interface Fence {
  tenure: Tenure;
  condition: TransactItem;
}

/** A lease item as stored (for balancing: who holds what, until when). */
export interface LeaseRecord {
  shardId: string;
  owner: string | undefined;
  epoch: number;
  expiresAt: number;
}

/** A side effect was refused because the tenure it was written under is over. */
export class LeaseLostError extends Error {
  constructor(readonly tenure: Tenure) {
    super(`the lease of shard ${tenure.shardId} at epoch ${tenure.epoch} is no longer held by ${tenure.owner}`);
    this.name = 'LeaseLostError';
  }
}

/** At most this many pages of leases or consumers are read for balancing. */
const MAX_PAGES = 20;

/** How often a holder renews its leases (and every consumer looks at the lease table): a third of the TTL. */
export function renewalPeriodMs(ttlMs: number): number {
  return Math.max(50, Math.floor(ttlMs / 3));
}

/**
 * How the lease writes are retried (the client given as `LeaseOptions.doc` in a consumer): on
 * the lease's own time scale. The SDK's default waits up to 1 s before retrying a throttled
 * write and up to 2 s before the next try, a whole short TTL: a successor taking a free lease
 * waited that long, and a holder's renewals lapsed. These retries wait a random part (full
 * jitter) of an eighth of the renewal period, then of a quarter, 3 attempts in all: still a
 * backoff, and the next heartbeat is the retry after that.
 */
export function leaseRetryStrategy(ttlMs: number): ConfiguredRetryStrategy {
  const period = renewalPeriodMs(ttlMs);
  return new ConfiguredRetryStrategy(3, (attempt) => Math.floor(Math.random() * (period / 8) * 2 ** (attempt - 1)));
}

export class LeaseStore {
  constructor(private readonly options: LeaseOptions) {}

  get owner(): string {
    return this.options.owner;
  }

  /**
   * The update that takes `shardId`'s lease at `now` (ms) if it is free, expired or ours, or,
   * with `from`, if that tenure is still the current one (taking a shard over to balance).
   */
  acquireParams(shardId: string, now: number, from?: Tenure): UpdateCommandInput {
    const { tableName, consumerName, owner, ttlMs } = this.options;
    return {
      TableName: tableName,
      Key: streamLeaseKey(consumerName, shardId),
      UpdateExpression:
        'SET #owner = :owner, expiresAt = :expiresAt, acquiredAt = :acquiredAt, entityType = :entityType, ' +
        'consumerName = :consumerName, shardId = :shardId ADD epoch :one',
      ConditionExpression: from
        ? '#owner = :from AND epoch = :fromEpoch'
        : 'attribute_not_exists(#owner) OR expiresAt < :now OR #owner = :owner',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: {
        ':owner': owner,
        ':expiresAt': now + ttlMs,
        ':acquiredAt': new Date(now).toISOString(),
        ':entityType': EntityType.Meta,
        ':consumerName': consumerName,
        ':shardId': shardId,
        ':one': 1,
        ...(from ? { ':from': from.owner, ':fromEpoch': from.epoch } : { ':now': now }),
      },
      ReturnValues: 'UPDATED_NEW',
    };
  }

  /** The update that extends a tenure; fails unless it is still the current one. */
  renewParams(tenure: Tenure, now: number): UpdateCommandInput {
    const { tableName, consumerName, ttlMs } = this.options;
    return {
      TableName: tableName,
      Key: streamLeaseKey(consumerName, tenure.shardId),
      UpdateExpression: 'SET expiresAt = :expiresAt',
      ...this.current(tenure),
      ExpressionAttributeValues: { ...this.current(tenure).ExpressionAttributeValues, ':expiresAt': now + ttlMs },
    };
  }

  /** Gives the lease up: free at once for anyone, its epoch kept so that the next tenure is newer. */
  releaseParams(tenure: Tenure): UpdateCommandInput {
    const { tableName, consumerName } = this.options;
    return {
      TableName: tableName,
      Key: streamLeaseKey(consumerName, tenure.shardId),
      UpdateExpression: 'SET expiresAt = :zero REMOVE #owner',
      ...this.current(tenure),
      ExpressionAttributeValues: { ...this.current(tenure).ExpressionAttributeValues, ':zero': 0 },
    };
  }

  /** A ConditionCheck for a transaction: it commits only while `tenure` is current. */
  fenceCondition(tenure: Tenure): TransactItem {
    return {
      ConditionCheck: {
        TableName: this.options.tableName,
        Key: streamLeaseKey(this.options.consumerName, tenure.shardId),
        ...this.current(tenure),
      },
    };
  }

  fence(tenure: Tenure): Fence {
    return { tenure, condition: this.fenceCondition(tenure) };
  }

  /** The tenure now held, or undefined when another consumer holds the lease. Other errors reject. */
  async acquire(shardId: string, now = Date.now(), from?: Tenure): Promise<Tenure | undefined> {
    try {
      const { Attributes } = await this.options.doc.send(new UpdateCommand(this.acquireParams(shardId, now, from)));
      return { shardId, owner: this.owner, epoch: Number(Attributes?.epoch) };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /** True when the lease was extended; false when the tenure is over. */
  renew(tenure: Tenure, now = Date.now()): Promise<boolean> {
    return this.conditional(new UpdateCommand(this.renewParams(tenure, now)));
  }

  /** Gives the lease up if the tenure is still current: true when it was, false when it was over already. */
  release(tenure: Tenure): Promise<boolean> {
    return this.conditional(new UpdateCommand(this.releaseParams(tenure)));
  }

  /** Whether `tenure` is still current (a strongly consistent read). */
  async isCurrent(tenure: Tenure): Promise<boolean> {
    const { Item } = await this.options.doc.send(
      new GetCommand({
        TableName: this.options.tableName,
        Key: streamLeaseKey(this.options.consumerName, tenure.shardId),
        ConsistentRead: true,
      }),
    );
    return Item?.owner === tenure.owner && Item?.epoch === tenure.epoch;
  }

  /** Every lease of this consumer name (strongly consistent). */
  async list(): Promise<LeaseRecord[]> {
    const items = await this.query(streamLeaseSKPrefix(this.options.consumerName));
    return items.flatMap((item) =>
      typeof item.shardId === 'string'
        ? [
            {
              shardId: item.shardId,
              owner: typeof item.owner === 'string' ? item.owner : undefined,
              epoch: Number(item.epoch ?? 0),
              expiresAt: Number(item.expiresAt ?? 0),
            },
          ]
        : [],
    );
  }

  /** Says this consumer is running until `now + ttlMs` (renewed with the leases). */
  async announce(now = Date.now()): Promise<void> {
    const { tableName, consumerName, owner, ttlMs } = this.options;
    await this.options.doc.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...streamWorkerKey(consumerName, owner),
          entityType: EntityType.Meta,
          consumerName,
          owner,
          expiresAt: now + ttlMs,
        },
      }),
    );
  }

  /** Says this consumer stopped: the others share its shards at their next heartbeat. */
  async withdraw(): Promise<void> {
    const { tableName, consumerName, owner } = this.options;
    await this.options.doc.send(new DeleteCommand({ TableName: tableName, Key: streamWorkerKey(consumerName, owner) }));
  }

  /** The consumers of this name that announced themselves and have not expired at `now`. */
  async running(now = Date.now()): Promise<string[]> {
    const items = await this.query(streamWorkerSKPrefix(this.options.consumerName));
    return items.flatMap((item) =>
      typeof item.owner === 'string' && Number(item.expiresAt) > now ? [item.owner] : [],
    );
  }

  private current(tenure: Tenure) {
    return {
      ConditionExpression: '#owner = :owner AND epoch = :epoch',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':owner': tenure.owner, ':epoch': tenure.epoch } as Record<string, unknown>,
    };
  }

  private async query(prefix: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.options.doc.send(
        new QueryCommand({
          TableName: this.options.tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
          ExpressionAttributeValues: { ':pk': STREAM_CHECKPOINT_PK, ':prefix': prefix },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(result.Items ?? []));
      start = result.LastEvaluatedKey;
      if (!start) return items;
    }
    throw new Error(`more than ${MAX_PAGES} pages under ${prefix}`);
  }

  private async conditional(command: UpdateCommand): Promise<boolean> {
    try {
      await this.options.doc.send(command);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
