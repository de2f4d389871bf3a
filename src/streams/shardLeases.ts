/**
 * The leases one consumer holds (src/streams/leases.ts), kept by a heartbeat: every third of the
 * TTL it renews what it holds, releases the shards it has read to their end and tries to take
 * every other unfinished shard (a free or expired lease). A consumer reads only the shards
 * `holds()` says are its own; a lease whose renewal keeps failing (DynamoDB unreachable) stops
 * counting as held once its TTL has passed, as it does for everyone else.
 */
import type { CheckpointStore } from './checkpoints.js';
import type { LeaseStore } from './leases.js';
import type { StreamLog } from './processor.js';
import type { ShardSet } from './shardSet.js';

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

  /**
   * Restarts the readers of the shards taken since the last call from their checkpoints,
   * wherever another consumer left them. A checkpoint that cannot be read is tried next round.
   */
  async restartTaken(shards: ShardSet, store: CheckpointStore): Promise<void> {
    const ids = [...this.taken];
    this.taken.clear();
    for (const shardId of ids) {
      try {
        shards.reset(shardId, await store.loadOne(shardId));
      } catch (error) {
        this.taken.add(shardId);
        this.log.warn({ err: error, shardId }, 'stream checkpoint not read after taking a lease; retrying');
      }
    }
  }

  /**
   * Refreshes the readers of the shards other consumers read from the checkpoints: a child
   * shard may be read once its parent is finished, whoever finished it.
   */
  async refreshOthers(shards: ShardSet, store: CheckpointStore): Promise<void> {
    const { checkpoints } = await store.load();
    for (const shard of [...shards.values()]) {
      const shardId = shard.info.shardId;
      if (!this.holds(shardId)) shards.reset(shardId, checkpoints.get(shardId));
    }
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
