/**
 * The leases one consumer holds (src/streams/leases.ts), kept by a heartbeat. Every third of
 * the TTL it announces itself, renews what it holds, releases the shards it has read to their
 * end, and balances: with N consumers running and M unfinished shards, each ends up with
 * ⌊M/N⌋ or ⌈M/N⌉ of them.
 *
 * - Above ⌈M/N⌉ it releases the surplus (another consumer takes it at its next beat);
 * - below ⌈M/N⌉ it takes free or expired leases;
 * - below ⌊M/N⌋ with nothing free it takes a shard over from the consumer holding the most
 *   (conditional on that holder's tenure: the fence stops the old holder's in-flight batch).
 *
 * A consumer reads only the shards `holds()` says are its own: a lease whose renewal keeps
 * failing (DynamoDB unreachable) stops counting as held once its TTL has passed, as it does for
 * everyone else. A write refused by the fence (`drop()`) ends the tenure at once.
 *
 * Fail-over: a consumer that reads a lease held by another and due to expire before its own next
 * beat (the holder missed a renewal: stalled, paused or gone) looks again just after that
 * expiry, not at its next beat; a healthy holder's lease is always further off than that, so
 * this costs nothing while the holders are well. A stopping consumer releases what it holds
 * without waiting for a beat under way (stop()).
 */
import type { CheckpointStore } from './checkpoints.js';
import { LeaseHeartbeat } from './leaseHeartbeat.js';
import type { BeatReason, RoundTrace } from './leaseHeartbeat.js';
import { renewalPeriodMs } from './leases.js';
import type { LeaseRecord, LeaseStore, Tenure } from './leases.js';
import type { StreamLog } from './processor.js';
import type { ShardSet } from './shardSet.js';

interface LeasedShard {
  readonly info: { readonly shardId: string };
  readonly finished: boolean;
}

interface Held {
  tenure: Tenure;
  /** When the lease runs out, by our clock (measured from before the write was sent). */
  until: number;
}

export class ShardLeases {
  private readonly held = new Map<string, Held>();
  private readonly taken = new Set<string>();
  private heartbeat: LeaseHeartbeat | undefined;
  private lastBeatAt: number | undefined;
  private stopping = false;

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

  /** How often the heartbeat runs: the renewal period. */
  get periodMs(): number {
    return renewalPeriodMs(this.ttlMs);
  }

  holds(shardId: string, now = Date.now()): boolean {
    const held = this.held.get(shardId);
    return held !== undefined && now < held.until;
  }

  /** The tenure under which `shardId` is read now; undefined when it is not ours. */
  tenure(shardId: string, now = Date.now()): Tenure | undefined {
    return this.holds(shardId, now) ? this.held.get(shardId)?.tenure : undefined;
  }

  get count(): number {
    let count = 0;
    for (const shardId of this.held.keys()) if (this.holds(shardId)) count++;
    return count;
  }

  /** The shard ids held now. */
  get shardIds(): string[] {
    return [...this.held.keys()].filter((shardId) => this.holds(shardId));
  }

  /**
   * A write under `tenure` was refused by the fence: another consumer holds the shard. Stop
   * reading it at once (the reader is restarted from the checkpoint if the lease comes back).
   */
  drop(tenure: Tenure): void {
    const held = this.held.get(tenure.shardId);
    if (held?.tenure.epoch !== tenure.epoch) return;
    this.held.delete(tenure.shardId);
    this.log.warn(
      { shardId: tenure.shardId, owner: this.owner, epoch: tenure.epoch },
      'stream shard lease lost: a write was fenced off; dropping the shard',
    );
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
  async maintain(shards: Iterable<LeasedShard>, why: BeatReason = 'beat'): Promise<void> {
    const all = [...shards];
    const at = Date.now();
    const trace: RoundTrace = {
      why,
      at,
      sinceLastMs: this.lastBeatAt === undefined ? undefined : at - this.lastBeatAt,
      skippedTicks: this.heartbeat?.takeSkipped() ?? 0,
      renewed: [],
      leases: [],
      takes: [],
    };
    this.lastBeatAt = at;
    // The announcement goes out beside the renewals and the look at the leases, not before
    // them: a slow write of it must not put off taking a free lease (balance counts this
    // consumer as running either way).
    const announced = this.store.announce(at).then(
      () => void (trace.announceMs = Date.now() - at),
      (error: unknown) => this.log.warn({ err: error }, 'stream consumer not announced; retrying'),
    );
    await Promise.all(all.map((shard) => this.keep(shard, trace)));
    const unfinished = all.filter((shard) => !shard.finished).map((shard) => shard.info.shardId);
    try {
      await this.balance(unfinished, trace);
    } catch (error) {
      this.log.warn({ err: error }, 'stream shard leases not balanced; retrying');
    }
    await announced;
    this.log.debug({ owner: this.owner, ...trace, ms: Date.now() - at }, 'stream lease round');
    if (this.taken.size > 0) this.onTaken();
  }

  /** Renews a held lease, or releases it once its shard is finished. */
  private async keep({ info: { shardId }, finished }: LeasedShard, trace: RoundTrace): Promise<void> {
    const held = this.held.get(shardId);
    if (!held) return;
    const at = Date.now();
    try {
      if (finished) {
        this.held.delete(shardId);
        await this.store.release(held.tenure);
      } else if (await this.store.renew(held.tenure, at)) {
        trace.renewed.push({ shardId, ms: Date.now() - at, ok: true, expiresAt: at + this.ttlMs });
        // A fenced write may have dropped the tenure meanwhile: do not bring it back.
        if (this.held.get(shardId) === held) held.until = at + this.ttlMs;
      } else if (this.held.get(shardId) === held) {
        trace.renewed.push({ shardId, ms: Date.now() - at, ok: false });
        this.held.delete(shardId);
        this.log.warn({ shardId, owner: this.owner }, 'stream shard lease lost to another consumer');
      }
    } catch (error) {
      this.log.warn({ err: error, shardId }, 'stream shard lease not renewed; retrying');
    }
  }

  /** Takes, sheds or takes over leases so that this consumer holds its share of `unfinished`. */
  private async balance(unfinished: string[], trace: RoundTrace): Promise<void> {
    if (unfinished.length === 0 || this.stopping) return;
    const [records, running] = await Promise.all([this.store.list(), this.store.running(trace.at)]);
    // Expiry is judged as of when the leases were read, not when the beat began.
    const at = Date.now();
    trace.listedAt = at;
    trace.leases = records.map(({ shardId, owner, expiresAt }) => ({ shardId, owner, expiresAt }));
    // Another's lease due to expire before the next tick: its holder missed a renewal.
    const due = records.filter((r) => r.owner !== undefined && r.owner !== this.owner && r.expiresAt >= at);
    if (due.length > 0) this.heartbeat?.lookAt(Math.min(...due.map((r) => r.expiresAt)), at);
    const consumers = new Set([...running, this.owner]);
    const most = Math.ceil(unfinished.length / consumers.size);
    const least = Math.floor(unfinished.length / consumers.size);
    const byShard = new Map(records.map((record) => [record.shardId, record]));
    const mine = () => unfinished.filter((shardId) => this.held.has(shardId));

    for (const shardId of mine().slice(most)) {
      const held = this.held.get(shardId) as Held;
      this.held.delete(shardId);
      await this.store.release(held.tenure).catch((error: unknown) => {
        this.log.warn({ err: error, shardId }, 'stream shard lease not released; it expires on its own');
      });
      this.log.info({ shardId, owner: this.owner }, 'stream shard lease handed on (balancing)');
    }

    // Ours in the table but not here: a take whose answer was lost (it is taken again).
    const isFree = (record: LeaseRecord | undefined) =>
      !record ||
      record.owner === undefined ||
      record.expiresAt < at ||
      !consumers.has(record.owner) ||
      (record.owner === this.owner && !this.held.has(record.shardId));
    for (const shardId of unfinished) {
      if (mine().length >= most || this.stopping) break;
      const record = byShard.get(shardId);
      if (this.held.has(shardId) || !isFree(record)) continue;
      // A holder that stopped announcing itself is gone, but its lease may not have expired yet.
      const unexpired = record?.owner !== undefined && record.owner !== this.owner && record.expiresAt >= at;
      await this.take(
        shardId,
        at,
        trace,
        unexpired ? { shardId, owner: record.owner as string, epoch: record.epoch } : undefined,
      );
    }

    // Nothing free left and still short: take over from whoever holds the most.
    while (mine().length < least && !this.stopping) {
      const counts = new Map<string, LeaseRecord[]>();
      for (const shardId of unfinished) {
        const record = byShard.get(shardId);
        if (!record?.owner || isFree(record) || record.owner === this.owner) continue;
        counts.set(record.owner, [...(counts.get(record.owner) ?? []), record]);
      }
      const [, richest] = [...counts].sort((a, b) => b[1].length - a[1].length)[0] ?? [];
      if (!richest || richest.length <= mine().length + 1) break;
      const victim = richest[richest.length - 1] as LeaseRecord;
      byShard.delete(victim.shardId);
      await this.take(victim.shardId, at, trace, {
        shardId: victim.shardId,
        owner: victim.owner as string,
        epoch: victim.epoch,
      });
    }
  }

  private async take(shardId: string, now: number, trace: RoundTrace, from?: Tenure): Promise<void> {
    // The lease runs from when this write is sent, whatever the beat spent before it.
    const at = Math.max(now, Date.now());
    const outcome = (result: 'taken' | 'refused' | 'failed') =>
      trace.takes.push({ shardId, sentAt: at, ms: Date.now() - at, outcome: result });
    try {
      const tenure = await this.store.acquire(shardId, at, from);
      if (!tenure) {
        outcome('refused');
        return;
      }
      outcome('taken');
      this.held.set(shardId, { tenure, until: at + this.ttlMs });
      this.taken.add(shardId);
      this.log.info(
        {
          shardId,
          owner: this.owner,
          epoch: tenure.epoch,
          ...(from ? { from: from.owner } : {}),
          sentAt: at,
          ms: Date.now() - at,
        },
        'stream shard lease taken',
      );
    } catch (error) {
      outcome('failed');
      this.log.warn({ err: error, shardId }, 'stream shard lease not taken; retrying');
    }
  }

  /** Beats every renewal period (and just after an expiry it read: LeaseHeartbeat) until stop(). */
  start(shards: () => Iterable<LeasedShard>): void {
    this.stopping = false;
    this.heartbeat = new LeaseHeartbeat(this.periodMs, (why) => this.maintain(shards(), why));
    this.heartbeat.start();
  }

  /**
   * Stops the heartbeat and releases every lease still held, so a successor starts at once: at
   * once, not after a beat under way (whose renewals then fail harmlessly, and which takes
   * nothing more); whatever that beat still took is released after it, and the announcement
   * withdrawn.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    const beat = this.heartbeat?.stop();
    const releasing = this.releaseHeld();
    await beat;
    // Withdrawn after the beat, whose announcement would otherwise outlive the withdrawal.
    await Promise.all([
      releasing,
      this.releaseHeld(),
      this.store.withdraw().catch((error: unknown) => {
        this.log.warn({ err: error }, 'stream consumer not withdrawn; it expires on its own');
      }),
    ]);
  }

  private async releaseHeld(): Promise<void> {
    const held = [...this.held.values()];
    this.held.clear();
    await Promise.all(
      held.map(async ({ tenure }) => {
        const sentAt = Date.now();
        try {
          const released = await this.store.release(tenure);
          this.log.info(
            {
              shardId: tenure.shardId,
              owner: this.owner,
              epoch: tenure.epoch,
              released,
              sentAt,
              ms: Date.now() - sentAt,
            },
            'stream shard lease released',
          );
        } catch (error) {
          this.log.warn(
            { err: error, shardId: tenure.shardId },
            'stream shard lease not released; it expires on its own',
          );
        }
      }),
    );
  }
}
