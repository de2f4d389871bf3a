/**
 * Serves the playground: `GET /graphql` from a browser (Accept: text/html, no `query`
 * parameter) gets the GraphiQL page; `/playground/assets/*` its bundled files. Every other
 * request to /graphql goes on to Apollo Server.
 *
 * The pre-filled headers (a development token) go to loopback clients only: a page served to
 * another host has an empty headers editor, so a server reachable from a network hands no
 * token to whoever asks.
 */
import express from 'express';
import type { Router } from 'express';
import type { Logger } from 'pino';
import { isLoopback } from '../loopback.js';
import { ASSET_FILE, playgroundAssets } from './bundle.js';
import { ASSET_PATH, PLAYGROUND_CSP, playgroundPage } from './page.js';
import type { PlaygroundPageOptions } from './page.js';

const wantsHtml = (req: express.Request) =>
  req.query.query === undefined &&
  req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';

export function playgroundRouter(options: PlaygroundPageOptions & { log: Logger }): Router {
  const router = express.Router();
  const page = playgroundPage(options);
  const pageWithoutHeaders = playgroundPage({ ...options, defaultHeaders: {} });

  router.get('/graphql', (req, res, next) => {
    if (!wantsHtml(req)) return next();
    // Start bundling now if needed, so the assets are ready when the page asks for them.
    playgroundAssets().catch((error: unknown) => options.log.error({ err: error }, 'playground build failed'));
    res
      .set('Content-Security-Policy', PLAYGROUND_CSP)
      .set('Cache-Control', 'no-store')
      .type('html')
      .send(isLoopback(req.socket.remoteAddress) ? page : pageWithoutHeaders);
  });

  router.get(`${ASSET_PATH}/:file`, async (req, res) => {
    const file = req.params.file;
    if (!ASSET_FILE.test(file)) {
      res.sendStatus(404);
      return;
    }
    const dir = await playgroundAssets();
    res.sendFile(file, { root: dir, maxAge: '1h', dotfiles: 'deny' }, (error?: Error) => {
      if (error && !res.headersSent) res.sendStatus(404);
    });
  });
  return router;
}
