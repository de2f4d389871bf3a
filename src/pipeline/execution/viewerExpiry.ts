/**
 * The one timer that ends what a token opened when the token expires, for both streaming
 * transports: a WebSocket closes with 4401, an SSE stream ends with an UNAUTHENTICATED message.
 * Tokens may live longer than setTimeout can wait (about 24.8 days): the timer re-arms until
 * the token has expired, so it never fires early.
 */
import type { Viewer } from '../../auth/tokens.js';
import { hasExpired } from './execution.js';

/** setTimeout's limit (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `expired` once `viewer`'s token has expired; nothing for a viewer without `exp`.
 * Returns what cancels the timer (call it when the stream or socket ends first).
 */
export function atExpiry(viewer: Viewer | null, expired: () => void): () => void {
  const expiresAt = viewer?.expiresAt;
  if (expiresAt === undefined) return () => undefined;
  let timer: NodeJS.Timeout;
  const arm = () => {
    timer = setTimeout(
      () => (hasExpired(viewer) ? expired() : arm()),
      Math.min(Math.max(expiresAt * 1000 - Date.now(), 0), MAX_TIMER_MS),
    );
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}
