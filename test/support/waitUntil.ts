/**
 * The one wait-or-timeout of the tests and the bench, for conditions that raise no event (a
 * readiness probe, a metric, a count in another process). Where an event can be awaited, await it
 * instead.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  timeoutMs: number;
  /** What is awaited, for the timeout's message ("timed out after 500 ms waiting for <what>"). */
  what: string;
  /** The pause between two looks; 0 looks again after one turn of the event loop. 20 ms by default. */
  intervalMs?: number;
}

/** What `check` answers while the condition does not hold yet. */
type NotYet = undefined | null | false;

/**
 * Resolves with the first answer of `check` that is not `undefined`, `null` or `false` (a check
 * that is a plain condition answers `true`). Looks at once, then every `intervalMs`. Rejects with
 * `timed out after <timeoutMs> ms waiting for <what>` (and the last answer) once `timeoutMs` has
 * passed; a check that throws rejects at once with its error.
 */
export async function waitUntil<T>(
  check: () => T | Promise<T>,
  { timeoutMs, what, intervalMs = 20 }: WaitOptions,
): Promise<Exclude<T, NotYet>> {
  const started = performance.now();
  for (;;) {
    const answer = await check();
    if (answer !== undefined && answer !== null && answer !== false) return answer as Exclude<T, NotYet>;
    if (performance.now() - started > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(answer)})`);
    }
    await (intervalMs > 0 ? sleep(intervalMs) : new Promise((resolve) => setImmediate(resolve)));
  }
}
