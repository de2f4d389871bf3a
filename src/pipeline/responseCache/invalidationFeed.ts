/**
 * Whether this instance hears of every change of the table now. The cache serves and stores
 * only while it does: an instance that could miss an invalidation could serve an old answer
 * until its maximum age.
 *
 * A source (the in-process stream consumer, or the Redis invalidation channel carrying the
 * stream readers' heartbeats) calls `beat()` whenever it has proof that changes flow, and `down()`
 * when it knows they do not (Redis disconnected). A beat may prove an earlier instant than its
 * arrival (a feed probe's echo proves the feed up to the probe's write): the feed is live while
 * the instant the last beat proves is younger than `timeoutMs` and no source said down since.
 * A beat that ends a dead spell calls `onGap` first: invalidations of the spell may have been
 * lost, so the cache flushes.
 */
export interface InvalidationFeedOptions {
  /** How long without a beat the feed counts as dead. */
  timeoutMs: number;
  onGap?: () => void;
  now?: () => number;
}

export class InvalidationFeed {
  private lastBeat = -Infinity;
  private isDown = false;
  private readonly now: () => number;

  constructor(private readonly options: InvalidationFeedOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Proof that changes reached this instance up to `ageMs` ago (default: now). A proof older than the timeout proves nothing. */
  beat(ageMs = 0): void {
    const now = this.now();
    const provenAt = now - Math.max(0, ageMs);
    if (now - provenAt > this.options.timeoutMs) return;
    if (!this.liveAt(now)) this.options.onGap?.();
    this.lastBeat = Math.max(this.lastBeat, provenAt);
    this.isDown = false;
  }

  /** How long the feed stays live without a beat. */
  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /** The source knows changes do not reach this instance (until its next beat). */
  down(): void {
    this.isDown = true;
  }

  get live(): boolean {
    return this.liveAt(this.now());
  }

  /** Milliseconds since the last beat (Infinity before the first). */
  get silentForMs(): number {
    return this.now() - this.lastBeat;
  }

  private liveAt(now: number): boolean {
    return !this.isDown && now - this.lastBeat <= this.options.timeoutMs;
  }
}

/** The feed of a process that has none (no stream consumer, no Redis): never live, so the cache never serves. */
export const noFeed = (): InvalidationFeed => new InvalidationFeed({ timeoutMs: -1 });
