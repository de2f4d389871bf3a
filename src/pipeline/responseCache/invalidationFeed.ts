/**
 * Whether this instance hears of every change of the table now. The cache serves and stores
 * only while it does: an instance that could miss an invalidation could serve an old answer
 * until its maximum age.
 *
 * A source (the in-process stream consumer, or the Redis invalidation channels carrying the
 * stream readers' heartbeats) calls `beat()` whenever it has proof that changes flow, and `down()`
 * when it knows they do not (Redis disconnected). A beat may prove an earlier instant than its
 * arrival (a feed probe's echo proves the feed up to the probe's write).
 *
 * The feed may come in partitions (the invalidation channels on Redis): a beat proves one
 * partition only, since it vouches for what came before it on its own channel. The feed is live
 * while, for every partition, the instant its last beat proves is younger than `timeoutMs` and
 * its source said no down since. The beat that makes the whole feed live again after a dead
 * spell (of any partition) calls `onGap` first: invalidations of the spell may have been lost,
 * so the cache flushes.
 */
/** How long an instance serves without proof that invalidations reach it: it notices a dead feed this fast. */
export const FEED_TIMEOUT_MS = 5000;

export interface InvalidationFeedOptions {
  /** How long without a beat the feed counts as dead. */
  timeoutMs: number;
  /** How many partitions must each beat (default 1). */
  partitions?: number | undefined;
  onGap?: () => void;
  now?: () => number;
}

export class InvalidationFeed {
  /** Per partition: the instant its last beat proves, and whether its source said down since. */
  private readonly lastBeat: number[];
  private readonly isDown: boolean[];
  private readonly now: () => number;

  constructor(private readonly options: InvalidationFeedOptions) {
    this.now = options.now ?? (() => performance.now());
    const partitions = options.partitions ?? 1;
    if (!Number.isSafeInteger(partitions) || partitions < 1)
      throw new Error(`a feed has 1 partition or more, got ${partitions}`);
    this.lastBeat = Array.from({ length: partitions }, () => -Infinity);
    this.isDown = Array.from({ length: partitions }, () => false);
  }

  /** How many partitions must each beat. */
  get partitions(): number {
    return this.lastBeat.length;
  }

  /**
   * Proof that changes of `partition` reached this instance up to `ageMs` ago (default: now).
   * A proof older than the timeout proves nothing.
   */
  beat(ageMs = 0, partition = 0): void {
    const last = this.lastBeat[partition];
    if (last === undefined) throw new Error(`no partition ${partition} in a feed of ${this.partitions}`);
    const now = this.now();
    const provenAt = now - Math.max(0, ageMs);
    if (now - provenAt > this.options.timeoutMs) return;
    const wasLive = this.liveAt(now);
    this.lastBeat[partition] = Math.max(last, provenAt);
    this.isDown[partition] = false;
    if (!wasLive && this.liveAt(now)) this.options.onGap?.();
  }

  /** How long the feed stays live without a beat. */
  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /** The source knows changes of `partition` (default: every one) do not reach this instance, until its next beat. */
  down(partition?: number): void {
    if (partition === undefined) this.isDown.fill(true);
    else if (partition in this.isDown) this.isDown[partition] = true;
  }

  get live(): boolean {
    return this.liveAt(this.now());
  }

  /** Whether `partition` is live on its own (the metrics: which channel failed). */
  partitionLive(partition: number): boolean {
    return this.partitionLiveAt(partition, this.now());
  }

  /** Milliseconds since the oldest of the partitions' last beats (Infinity before each beat once). */
  get silentForMs(): number {
    return this.now() - Math.min(...this.lastBeat);
  }

  private liveAt(now: number): boolean {
    for (let partition = 0; partition < this.partitions; partition++)
      if (!this.partitionLiveAt(partition, now)) return false;
    return true;
  }

  private partitionLiveAt(partition: number, now: number): boolean {
    return !this.isDown[partition] && now - (this.lastBeat[partition] ?? -Infinity) <= this.options.timeoutMs;
  }
}

/** The feed of a process that has none (no stream consumer, no Redis): never live, so the cache never serves. */
export const noFeed = (): InvalidationFeed => new InvalidationFeed({ timeoutMs: -1 });
