/**
 * Whether a consumer's heartbeat vouches for a live invalidation feed: the heartbeat names its
 * publisher (the envelope's `from`, a consumer's lease owner name), its consumer name and some
 * of the shard tenures it reads under (shard, epoch: the fence of src/streams/leases.ts). It
 * vouches only while the lease table shows one of those tenures as current: held by that
 * owner, at that epoch, not expired. So a consumer that stopped (its leases released), died
 * (its leases expire) or lost a shard to another (a newer epoch) keeps no instance's cache
 * serving, whoever sends heartbeats in its name.
 *
 * Cost: a lease is read (strongly consistent, one small item) when no record of it younger than
 * `recheckMs` says yes, so each instance reads about one lease item per `recheckMs` while its
 * consumers beat, and never more than MAX_READS_PER_SECOND. A read that fails vouches for nothing: the feed times out as it would without
 * heartbeats (DynamoDB down means no write lands either).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { streamLeaseKey } from '../../table/keys.js';

export interface LeaseCheckOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  /** How long a lease read is trusted (it is read again after, or once it expires by its own time). */
  recheckMs?: number;
  now?: () => number;
}

interface LeaseSeen {
  owner: string | undefined;
  epoch: number;
  expiresAt: number;
  readAt: number;
}

/** Lease records kept at most (one per shard of each consumer name heard). */
const MAX_KNOWN = 1000;
/**
 * Lease reads a second at most: heartbeats naming unknown shards (forged, where Redis is
 * trusted without a secret) must not turn into a flood of DynamoDB reads. Real consumers need
 * about one read per recheck.
 */
const MAX_READS_PER_SECOND = 10;

export class LeaseCheck {
  private readonly known = new Map<string, LeaseSeen>();
  private readonly reading = new Map<string, Promise<LeaseSeen | undefined>>();
  private readonly recheckMs: number;
  private readonly now: () => number;
  /** Lease reads made, and those that failed. */
  reads = 0;
  failures = 0;
  /** The second of the last read, and the reads made in it. */
  private second = -1;
  private readsThisSecond = 0;

  constructor(private readonly options: LeaseCheckOptions) {
    this.recheckMs = options.recheckMs ?? 3000;
    this.now = options.now ?? Date.now;
  }

  /** Whether one of `tenures` is current for `owner` in `group`'s leases. Never rejects. */
  async vouches(
    owner: string,
    group: string,
    tenures: readonly { shardId: string; epoch: number }[],
  ): Promise<boolean> {
    const holds = (seen: LeaseSeen | undefined, epoch: number) =>
      seen !== undefined && seen.owner === owner && seen.epoch === epoch && seen.expiresAt > this.now();
    let unknown: { shardId: string; epoch: number } | undefined;
    for (const tenure of tenures) {
      const seen = this.known.get(`${group}\n${tenure.shardId}`);
      // A tenure newer than the one read (a shard taken since) is read again.
      if (seen && this.now() - seen.readAt <= this.recheckMs && seen.epoch >= tenure.epoch) {
        if (holds(seen, tenure.epoch)) return true;
      } else unknown ??= tenure;
    }
    // One read per heartbeat at most: another beat comes within a second.
    if (!unknown) return false;
    return holds(await this.read(group, unknown.shardId), unknown.epoch);
  }

  private read(group: string, shardId: string): Promise<LeaseSeen | undefined> {
    const id = `${group}\n${shardId}`;
    const pending = this.reading.get(id);
    if (pending) return pending;
    let key: ReturnType<typeof streamLeaseKey>;
    try {
      key = streamLeaseKey(group, shardId);
    } catch {
      return Promise.resolve(undefined);
    }
    const second = Math.floor(this.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      this.readsThisSecond = 0;
    }
    if (++this.readsThisSecond > MAX_READS_PER_SECOND) return Promise.resolve(undefined);
    const reading = (async () => {
      const readAt = this.now();
      this.reads++;
      try {
        const { Item } = await this.options.doc.send(
          new GetCommand({ TableName: this.options.tableName, Key: key, ConsistentRead: true }),
        );
        const seen: LeaseSeen = {
          owner: typeof Item?.owner === 'string' ? Item.owner : undefined,
          epoch: Number(Item?.epoch ?? -1),
          expiresAt: Number(Item?.expiresAt ?? 0),
          readAt,
        };
        if (this.known.size >= MAX_KNOWN) this.known.clear();
        this.known.set(id, seen);
        return seen;
      } catch {
        this.failures++;
        return undefined;
      } finally {
        this.reading.delete(id);
      }
    })();
    this.reading.set(id, reading);
    return reading;
  }
}
