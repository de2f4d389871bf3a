/**
 * When a consumer's lease heartbeat (src/streams/shardLeases.ts) runs: every renewal period,
 * and once more just after a lease it read was due to expire before its next tick (a holder
 * that missed a renewal), so that a successor takes an expired lease within a write of its
 * expiry rather than up to a period later. One beat at a time: a tick that comes while a beat is
 * under way is skipped (counted, for the round's log line), and a look waits for that beat.
 */
export type BeatReason = 'beat' | 'expiry';

/**
 * What one heartbeat saw and did, logged at debug level as `stream lease round`: enough to tell
 * from a consumer's own log why it took a free lease when it did and not earlier (when it
 * looked, what the table said, how long each write took).
 */
export interface RoundTrace {
  /** Why it ran: the heartbeat, or a look just after a lease it read was due to expire. */
  why: BeatReason;
  /** When the beat began, and how long after the beat before it (the period, or later: a slow beat, a busy event loop). */
  at: number;
  sinceLastMs: number | undefined;
  /** Timer ticks skipped since the last beat because a beat was still under way. */
  skippedTicks: number;
  announceMs?: number;
  renewed: { shardId: string; ms: number; ok: boolean; expiresAt?: number }[];
  /** When the lease list came back, and each lease as read then (owner, expiresAt). */
  listedAt?: number;
  leases: { shardId: string; owner: string | undefined; expiresAt: number }[];
  takes: { shardId: string; sentAt: number; ms: number; outcome: 'taken' | 'refused' | 'failed' }[];
}

export class LeaseHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private look: { at: number; timer: NodeJS.Timeout } | undefined;
  private beat: Promise<void> | undefined;
  private skipped = 0;
  private stopped = false;

  constructor(
    private readonly periodMs: number,
    /** One beat; never rejects. */
    private readonly run: (why: BeatReason) => Promise<void>,
  ) {}

  /** The ticks skipped since the last call, because a beat was still under way. */
  takeSkipped(): number {
    const skipped = this.skipped;
    this.skipped = 0;
    return skipped;
  }

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.trigger('beat'), this.periodMs);
  }

  /** Runs a beat just after `at` (ms since the epoch), unless the next tick comes first or a look is due sooner. */
  lookAt(at: number, now = Date.now()): void {
    if (!this.timer || this.stopped || at >= now + this.periodMs) return;
    if (this.look && this.look.at <= at) return;
    if (this.look) clearTimeout(this.look.timer);
    const timer = setTimeout(
      () => {
        this.look = undefined;
        this.trigger('expiry');
      },
      Math.max(0, at + 1 - now),
    );
    this.look = { at, timer };
  }

  /** Stops the ticks and looks; resolves once the beat under way, if any, is over. */
  stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.look) clearTimeout(this.look.timer);
    this.look = undefined;
    return this.beat ?? Promise.resolve();
  }

  private trigger(why: BeatReason): void {
    if (this.stopped) return;
    if (this.beat) {
      if (why === 'beat') this.skipped++;
      else void this.beat.then(() => this.trigger(why));
      return;
    }
    this.beat = this.run(why).finally(() => (this.beat = undefined));
  }
}
