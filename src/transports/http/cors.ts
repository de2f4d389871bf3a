/**
 * Which browser origins may call the API: CORS for HTTP (the `cors` package) and the same
 * allow-list for WebSocket upgrades. Off by default: no origin but the server's own is allowed
 * until CORS_ORIGINS names some; development also allows http://localhost, http://127.0.0.1 and
 * http://[::1] on any port.
 */
import type http from 'node:http';
import cors from 'cors';

export interface CorsOptions {
  /** Exact origins, e.g. `https://shop.example.com` (scheme, host and port; no path). */
  origins: readonly string[];
  /** Also allow http://localhost, http://127.0.0.1 and http://[::1] on any port (development). */
  allowLocalhost: boolean;
}

/** The request headers a browser may send to /graphql. */
export const CORS_REQUEST_HEADERS = [
  'content-type',
  'authorization',
  'apollo-require-preflight',
  'x-apollo-operation-name',
  // The server takes a sane one as the request's id (and echoes it): a frontend may correlate.
  'x-request-id',
  // Server-Sent Events resume (graphql-sse sends it on reconnect).
  'last-event-id',
] as const;

const LOCALHOST = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

export function originAllowed(origin: string, { origins, allowLocalhost }: CorsOptions): boolean {
  return origins.includes(origin) || (allowLocalhost && LOCALHOST.test(origin));
}

/**
 * CORS for /graphql and its stream, on node:http: answers a preflight itself (204) and calls
 * `next` for any other request, with the headers added when its origin is allowed.
 */
export type CorsHandler = (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => void;

export function corsHandler(options: CorsOptions): CorsHandler {
  const handler: CorsHandler = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && originAllowed(origin, options)),
    methods: ['GET', 'POST'],
    allowedHeaders: [...CORS_REQUEST_HEADERS],
    exposedHeaders: ['x-request-id'],
    // Tokens travel in the Authorization header, never in cookies.
    credentials: false,
    maxAge: 600,
  });
  // A request without an Origin header (no browser sent it cross-site: a server, a native app,
  // curl) gets nothing from `cors`, whose origin check refuses an absent origin before it adds a
  // header: it goes on at once, without the package's per-request options copy and callbacks.
  return (req, res, next) => (req.headers.origin === undefined ? next() : handler(req, res, next));
}

/**
 * Whether a WebSocket upgrade may proceed: requests without an Origin (not from a browser)
 * and same-origin ones always may; a browser page elsewhere only when CORS would allow it.
 * Checked only when CORS_ORIGINS is set: a WebSocket carries its token in `connectionParams`,
 * never a credential the browser attaches by itself, so a page elsewhere opens one only as the
 * client it could be on its own; the list lets an operator keep other sites' pages off anyway.
 */
export function upgradeAllowed(req: http.IncomingMessage, options: CorsOptions): boolean {
  const origin = req.headers.origin;
  if (options.origins.length === 0 || origin === undefined) return true;
  try {
    if (new URL(origin).host === req.headers.host) return true;
  } catch {
    return false;
  }
  return originAllowed(origin, options);
}
