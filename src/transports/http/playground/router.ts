/**
 * Serves the playground: `GET /graphql` from a browser (Accept prefers text/html, no `query`
 * parameter) gets the GraphiQL page; `/playground/assets/*` its bundled files. Every other
 * request to /graphql goes on to the GraphQL handler.
 *
 * The pre-filled headers (a development token) go to loopback clients only: a page served to
 * another host has an empty headers editor, so a server reachable from a network hands no
 * token to whoever asks.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { Logger } from 'pino';
import { isLoopback } from '../loopback.js';
import { sendBody } from '../send.js';
import { ASSET_FILE, playgroundAssets, PlaygroundNotBuiltError } from './bundle.js';
import { ASSET_PATH, PLAYGROUND_CSP, playgroundPage } from './page.js';
import type { PlaygroundPageOptions } from './page.js';

export { ASSET_PATH };

/** In preference order on a tie: a client that names none of them gets JSON, not the page. */
const ANSWER_TYPES = ['application/json', 'application/graphql-response+json', 'text/html'] as const;

/**
 * The type of ANSWER_TYPES that `accept` prefers, as Express's `req.accepts` (negotiator) picks
 * it: the highest q-value, then the most specific range, then the range listed first, then the
 * order of ANSWER_TYPES.
 */
export function preferredAnswerType(accept: string | undefined): (typeof ANSWER_TYPES)[number] | undefined {
  const ranges = (accept ?? '*/*').split(',').flatMap((part, order) => {
    const [range = '', ...parameters] = part.split(';');
    const [type, subtype] = range.trim().toLowerCase().split('/');
    if (!type || !subtype) return [];
    const q = parameters.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined);
    return [{ type, subtype, q: q === undefined ? 1 : Number(q), order }];
  });
  // Per type, the most specific range that matches it (then the higher q, then the earlier).
  const priorities = ANSWER_TYPES.flatMap((answer, index) => {
    const [type, subtype] = answer.split('/');
    let priority: { q: number; s: number; o: number } | undefined;
    for (const range of ranges) {
      if ((range.type !== type && range.type !== '*') || (range.subtype !== subtype && range.subtype !== '*')) continue;
      const spec = {
        q: range.q,
        s: (range.type === type ? 4 : 0) + (range.subtype === subtype ? 2 : 0),
        o: range.order,
      };
      if (!priority || (priority.s - spec.s || priority.q - spec.q || priority.o - spec.o) < 0) priority = spec;
    }
    return priority && priority.q > 0 ? [{ answer, index, ...priority }] : [];
  });
  priorities.sort((a, b) => b.q - a.q || b.s - a.s || a.o - b.o || a.index - b.index);
  return priorities[0]?.answer;
}

/** True for a browser's navigation to /graphql: it prefers HTML and asks no query. */
export function wantsPlayground(req: IncomingMessage, search: URLSearchParams): boolean {
  return req.method === 'GET' && !search.has('query') && preferredAnswerType(req.headers.accept) === 'text/html';
}

const ASSET_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  ttf: 'font/ttf',
  woff: 'font/woff',
  woff2: 'font/woff2',
};

export function playgroundHandlers(options: PlaygroundPageOptions & { log: Logger }) {
  const page = playgroundPage(options);
  const pageWithoutHeaders = playgroundPage({ ...options, defaultHeaders: {} });

  return {
    /** The GraphiQL page. */
    async page(req: IncomingMessage, res: ServerResponse): Promise<void> {
      // Start bundling now if needed, so the assets are ready when the page asks for them.
      playgroundAssets().catch((error: unknown) =>
        error instanceof PlaygroundNotBuiltError
          ? options.log.warn(`playground: ${error.message}`)
          : options.log.error({ err: error }, 'playground build failed'),
      );
      const html = isLoopback(req.socket.remoteAddress) ? page : pageWithoutHeaders;
      await sendBody(
        req,
        res,
        200,
        [
          ['content-type', 'text/html; charset=utf-8'],
          ['content-security-policy', PLAYGROUND_CSP],
          ['cache-control', 'no-store'],
        ],
        html,
      );
    },
    /** GET /playground/assets/<file>: a file of the bundle, or 404. */
    async asset(req: IncomingMessage, res: ServerResponse, file: string): Promise<void> {
      const type = ASSET_TYPES[path.extname(file).slice(1)];
      if (!ASSET_FILE.test(file) || !type || (req.method !== 'GET' && req.method !== 'HEAD')) {
        return sendBody(req, res, 404, [['content-type', 'text/plain; charset=utf-8']], 'Not found\n');
      }
      let body: Buffer;
      try {
        body = await readFile(path.join(await playgroundAssets(), file));
      } catch {
        return sendBody(req, res, 404, [['content-type', 'text/plain; charset=utf-8']], 'Not found\n');
      }
      await sendBody(
        req,
        res,
        200,
        [
          ['content-type', type],
          ['cache-control', 'public, max-age=3600'],
        ],
        body,
      );
    },
  };
}
