/**
 * Paces a migration to a capacity budget: at most `readUnitsPerSecond` RCU and
 * `writeUnitsPerSecond` WCU on average, so a backfill on a live table leaves the table's
 * throughput to the application (and, on demand, bounds what the backfill costs per second).
 *
 * Units are what DynamoDB reports for each call (ReturnConsumedCapacity); a call is sent
 * first and paid for after, so the limiter delays the next call until the spent units fit the
 * rate. A call whose response reports no capacity is counted as one unit.
 */
export interface CapacityRate {
  readUnitsPerSecond: number;
  writeUnitsPerSecond: number;
}

export const DEFAULT_RATE: CapacityRate = { readUnitsPerSecond: 200, writeUnitsPerSecond: 200 };

export class CapacityLimiter {
  private readReadyAt = 0;
  private writeReadyAt = 0;
  readUnits = 0;
  writeUnits = 0;

  constructor(
    private readonly rate: CapacityRate,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    for (const [name, value] of Object.entries(rate)) {
      if (!(value > 0) || !Number.isFinite(value)) throw new Error(`${name} must be a positive number, got ${value}`);
    }
  }

  /** Waits until a call of this kind fits the rate. */
  async before(kind: 'read' | 'write'): Promise<void> {
    const readyAt = kind === 'read' ? this.readReadyAt : this.writeReadyAt;
    const wait = readyAt - this.now();
    if (wait > 0) await this.sleep(wait);
  }

  /** Books what a call consumed. */
  spent(kind: 'read' | 'write', units: number | undefined): void {
    const used = units && units > 0 ? units : 1;
    const start = Math.max(this.now(), kind === 'read' ? this.readReadyAt : this.writeReadyAt);
    if (kind === 'read') {
      this.readUnits += used;
      this.readReadyAt = start + (used / this.rate.readUnitsPerSecond) * 1000;
    } else {
      this.writeUnits += used;
      this.writeReadyAt = start + (used / this.rate.writeUnitsPerSecond) * 1000;
    }
  }
}
