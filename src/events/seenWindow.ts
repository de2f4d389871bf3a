/**
 * The last `size` keys seen, to drop repeats: a set with insertion-order eviction (the oldest
 * key leaves when a new one arrives at capacity). Bounded memory whatever the traffic; a repeat
 * older than the window is not recognised.
 */
export class SeenWindow {
  private readonly keys = new Set<string>();

  constructor(readonly size: number) {
    if (!Number.isSafeInteger(size) || size < 1)
      throw new Error(`a seen-window needs a size of at least 1, got ${size}`);
  }

  /** True the first time `key` is offered within the window (and remembers it); false for a repeat. */
  firstTime(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    // A Set iterates in insertion order: its first key is the oldest.
    if (this.keys.size > this.size) this.keys.delete(this.keys.values().next().value as string);
    return true;
  }

  get count(): number {
    return this.keys.size;
  }
}
