/**
 * The leases one consumer holds (src/streams/leases.ts), kept by a heartbeat: every third of the
 * TTL it renews what it holds, releases the shards it has read to their end and tries to take
 * every other unfinished shard (a free or expired lease). A consumer reads only the shards
 * `holds()` says are its own; a lease whose renewal keeps failing (DynamoDB unreachable) stops
 * counting as held once its TTL has passed, as it does for everyone else.
 */
import type { LeaseStore } from './leases.js';
import type { StreamLog } from './processor.js';

interface LeasedShard {
  readonly info: { readonly shardId: string };
  readonly finished: boolean;
}

export class ShardLeases {
  /** shardId -> when our lease runs out, by our clock (measured from before the write was sent). */
  private readonly held = new Map<string, number>();
  private readonly taken = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private beat: Promise<void> | undefined;

  constructor(
    private readonly store: LeaseStore,
    private readonly ttlMs: number,
    private readonly log: StreamLog,
    /** Called after a heartbeat took a shard (the consumer wakes up to read it). */
    private readonly onTaken: () => void,
  ) {}

  get owner(): string {
    return this.store.owner;
  }

  holds(shardId: string, now = Date.now()): boolean {
    const until = this.held.get(shardId);
    return until !== undefined && now < until;
  }

  get count(): number {
    let count = 0;
    for (const shardId of this.held.keys()) if (this.holds(shardId)) count++;
    return count;
  }

  /** The shards taken since the last call: their readers must start over from the checkpoint. */
  drainTaken(): string[] {
    const ids = [...this.taken];
    this.taken.clear();
    return ids;
  }

  /** Puts back a shard whose restart failed, for the next round. */
  retake(shardId: string): void {
    this.taken.add(shardId);
  }

  /** One heartbeat over `shards`. Never rejects: failures are logged, and retried next beat. */
  async maintain(shards: Iterable<LeasedShard>): Promise<void> {
    const work = [...shards].map(async ({ info: { shardId }, finished }) => {
      const at = Date.now();
      try {
        if (finished) {
          if (this.held.delete(shardId)) await this.store.release(shardId);
        } else if (this.held.has(shardId)) {
          if (await this.store.renew(shardId, at)) this.held.set(shardId, at + this.ttlMs);
          else {
            this.held.delete(shardId);
            this.log.warn({ shardId, owner: this.owner }, 'stream shard lease lost to another consumer');
          }
        } else if (await this.store.acquire(shardId, at)) {
          this.held.set(shardId, at + this.ttlMs);
          this.taken.add(shardId);
          this.log.info({ shardId, owner: this.owner }, 'stream shard lease taken');
        }
      } catch (error) {
        this.log.warn({ err: error, shardId }, 'stream shard lease not renewed or taken; retrying');
      }
    });
    await Promise.all(work);
    if (this.taken.size > 0) this.onTaken();
  }

  /** Beats every third of the TTL until stop(). */
  start(shards: () => Iterable<LeasedShard>): void {
    this.timer = setInterval(
      () => {
        this.beat ??= this.maintain(shards()).finally(() => (this.beat = undefined));
      },
      Math.max(50, Math.floor(this.ttlMs / 3)),
    );
  }

  /** Stops the heartbeat and releases every lease still held, so a successor starts at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.beat;
    const ids = [...this.held.keys()];
    this.held.clear();
    await Promise.all(
      ids.map((shardId) =>
        this.store.release(shardId).catch((error: unknown) => {
          this.log.warn({ err: error, shardId }, 'stream shard lease not released; it expires on its own');
        }),
      ),
    );
  }
}
