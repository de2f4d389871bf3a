/**
 * A batch's change events published in record order while its records are applied concurrently
 * (src/streams/processor.ts): a topic's events reach the subscribers and the topic's history in
 * the order of the changes, which a client resuming after an event id relies on.
 */
import type { ChangeEvent } from '../events/changeEvent.js';
import type { ProcessResult, PublishChangeEvent } from './processor.js';

/** A record applied: its event to publish (with the trace to end once it is), or null. */
export interface Applied {
  event: ChangeEvent;
  finish(error?: unknown): void;
}

/**
 * Publishes a batch's events in record order while the records are applied concurrently: the
 * event of record i goes out once every earlier record is applied (or skipped) and its event
 * out. A worker never waits for the publishing (the record it would wait for may be its own
 * next one): a publish that fails is the failure of its record, found here. Once a record has
 * failed (applying or publishing), nothing after it is published in this batch.
 */
export class PublishInOrder {
  private readonly slots: (Applied | null | undefined)[];
  private next = 0;
  /** The first record that failed: publishing never passes it. */
  private failedAt = Infinity;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    /** The batch's records' sequence numbers, in order. */
    private readonly sequenceNumbers: readonly string[],
    private readonly publish: PublishChangeEvent | undefined,
    private readonly result: Pick<ProcessResult, 'events' | 'failures'>,
  ) {
    this.slots = new Array<Applied | null | undefined>(sequenceNumbers.length);
  }

  /** Record `index` is applied: `applied` holds its event, or null for none. */
  ready(index: number, applied: Applied | null): void {
    this.slots[index] = applied;
    if (this.stopped) applied?.finish();
    else this.running = this.running.then(() => this.drain());
  }

  /** Record `index` failed: nothing from it on is published in this batch. */
  failed(index: number): void {
    this.failedAt = Math.min(this.failedAt, index);
    this.slots[index] = null;
  }

  /** Resolves once every event that can go out has; whatever was not reached is not published. */
  async settled(): Promise<void> {
    await this.running;
    this.stop();
  }

  private async drain(): Promise<void> {
    while (!this.stopped && this.next < this.failedAt && this.slots[this.next] !== undefined) {
      const index = this.next++;
      const applied = this.slots[index];
      if (!applied) continue;
      try {
        await this.publish?.(applied.event);
        this.result.events.push(applied.event);
        applied.finish();
      } catch (error) {
        applied.finish(error);
        this.result.failures.push({ index, sequenceNumber: this.sequenceNumbers[index] ?? '', error });
        this.stop();
      }
    }
  }

  /** Stops publishing: the traces of the events held back end now. */
  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (let i = this.next; i < this.slots.length; i++) this.slots[i]?.finish();
  }
}
