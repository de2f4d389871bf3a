/** The playground's HTML page and its Content-Security-Policy (everything from this server, nothing else). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../../projectRoot.js';

export const ASSET_PATH = '/playground/assets';

/** No CDN, no third-party request: the page works with the network off, and a browser enforces it. */
export const PLAYGROUND_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Monaco sets inline styles on its elements.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** A variable value the page replaces with a fresh random UUID on every run (browser/app.tsx). */
export const FRESH_UUID = '<fresh-uuid>';

interface ExampleTab {
  file: string;
  variables: Record<string, unknown>;
}

/** The example operations shown as tabs: the same documents the typed example client uses (client/operations). */
const EXAMPLES: ExampleTab[] = [
  { file: 'UserOrdersPage.graphql', variables: { userId: 'alice', first: 5 } },
  { file: 'CategoryPage.graphql', variables: { category: 'electronics', first: 5 } },
  { file: 'WatchMyOrders.graphql', variables: {} },
  // Needs the Authorization header: the profile created is the token's subject's.
  { file: 'CreateUser.graphql', variables: { input: { email: 'new-user@example.com', name: 'New User' } } },
  {
    file: 'PlaceOrder.graphql',
    variables: {
      input: { userId: 'alice', idempotencyKey: FRESH_UUID, items: [{ productId: 'mouse-m3', quantity: 1 }] },
    },
  },
];

export interface PlaygroundPageOptions {
  endpoint: string;
  /** The headers editor's starting content (JSON), e.g. an Authorization header for local use. */
  defaultHeaders?: Record<string, string>;
}

/** JSON safe to embed in a <script> element: no `</script>` or `<!--` can end it early. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

export function playgroundPage({ endpoint, defaultHeaders = {} }: PlaygroundPageOptions): string {
  const operations = path.join(projectRoot(), 'client', 'operations');
  const headers = JSON.stringify(defaultHeaders, null, 2);
  const config = {
    endpoint,
    freshUuid: FRESH_UUID,
    defaultHeaders: headers,
    tabs: EXAMPLES.map(({ file, variables }) => ({
      query: readFileSync(path.join(operations, file), 'utf8'),
      variables: JSON.stringify(variables, null, 2),
      headers,
    })),
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tablegraph playground</title>
<link rel="stylesheet" href="${ASSET_PATH}/playground.css">
<style>html, body, #root { height: 100%; margin: 0; }</style>
</head>
<body>
<div id="root"></div>
<script id="playground-config" type="application/json">${scriptJson(config)}</script>
<script type="module" src="${ASSET_PATH}/playground.js"></script>
</body>
</html>
`;
}
