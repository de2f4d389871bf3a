/**
 * An AbortSignal that aborts after `ms` with a TimeoutError, timed by setTimeout (which a test's
 * clock can move, unlike AbortSignal.timeout's), and a way to stop the timer once answered.
 */
export function timeout(ms: number): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The request took too long', 'TimeoutError')), ms);
  return { signal: controller.signal, done: () => clearTimeout(timer) };
}
