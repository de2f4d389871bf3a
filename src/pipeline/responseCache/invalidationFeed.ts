/**
 * Whether this instance hears of every change of the table now. The cache serves and stores
 * only while it does: an instance that could miss an invalidation could serve an old answer
 * until its maximum age.
 *
 * A source (the in-process stream consumer, or the Redis invalidation channel carrying the
 * consumers' heartbeats) calls `beat()` whenever it has proof that changes flow, and `down()`
 * when it knows they do not (Redis disconnected). The feed is live while the last beat is
 * younger than `timeoutMs` and no source said down since. A beat that ends a dead spell calls
 * `onGap` first: invalidations of the spell may have been lost, so the cache flushes.
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

  /** Proof that changes reach this instance now. */
  beat(): void {
    const now = this.now();
    if (!this.liveAt(now)) this.options.onGap?.();
    this.lastBeat = now;
    this.isDown = false;
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
