/**
 * The playground in a real browser: Debian's chromium driven by playwright-core, with every
 * request to a host other than the server aborted, so the page must come entirely from us. The
 * examples run from their tabs; the Explorer builds a query by clicking.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../../src/db/batchWrite.js';
import { demoItems } from '../../src/seed/seed.js';
import { PLAYGROUND_CSP } from '../../src/transports/http/playground/page.js';
import { startTestServer, tokenFor } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';

const ARTIFACTS = path.join(import.meta.dirname, '..', 'artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let server: TestServer;
let browser: Browser;
let page: Page;
const foreignRequests: string[] = [];
/** Bodies of the HTTP requests to /graphql, and the WebSockets the page opened. */
const graphqlPosts: string[] = [];
/** placeOrder answers the page received. */
const placedOrders: { orderId: string; replayed: boolean }[] = [];
const sockets: string[] = [];
const failedResponses: string[] = [];

beforeAll(async () => {
  // As `npm start` does in development: the headers editor starts with alice's token.
  server = await startTestServer({
    playground: { defaultHeaders: { Authorization: `Bearer ${await tokenFor('alice')}` } },
  });
  await putItems(server.dynamo.doc, server.tableName, demoItems());
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const origin = new URL(server.url).origin;
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin) {
      foreignRequests.push(url);
      return route.abort('blockedbyclient');
    }
    return route.continue();
  });
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url() === server.url) graphqlPosts.push(request.postData() ?? '');
  });
  page.on('websocket', (socket) => sockets.push(socket.url()));
  page.on('response', (response) => {
    if (response.request().postData()?.includes('mutation PlaceOrder')) {
      void response.json().then((body: any) =>
        placedOrders.push({
          orderId: body.data?.placeOrder?.order?.orderId,
          replayed: body.data?.placeOrder?.replayed,
        }),
      );
    }
    if (response.status() >= 400) failedResponses.push(`${response.status()} ${response.url()}`);
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** The result pane's visible text; Monaco renders spaces as non-breaking spaces, so collapse all whitespace. */
const resultText = async () => ((await page.locator('.graphiql-response').textContent()) ?? '').replace(/\s+/g, ' ');

describe('the playground', () => {
  it('serves GraphiQL with a same-origin-only Content-Security-Policy', async () => {
    // The first visit may bundle the assets (a few seconds, then cached under node_modules/.cache).
    const response = await page.goto(server.url, { timeout: 120_000 });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toBe(PLAYGROUND_CSP);
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 120_000 });
    expect(await page.locator('.graphiql-tab').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('UserOrdersPage'), expect.stringContaining('PlaceOrder')]),
    );
  }, 180_000);

  it('runs the example query through the UI and shows the result', async () => {
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(resultText, { timeout: 20_000 }).toContain('"name": "Alice Example"');
    expect(await resultText()).toContain('"totalCount": 30');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'playground.png') });
  });

  it('runs another example tab against the live server', async () => {
    await page.locator('.graphiql-tab', { hasText: 'CategoryPage' }).click();
    // Execute only once the tab's document is in the editor: GraphiQL derives the operation
    // name from the editor's content, and a click right after the switch can still send the
    // previous tab's name.
    await page.locator('.graphiql-tab-active', { hasText: 'CategoryPage' }).waitFor();
    await expect
      .poll(async () => ((await page.locator('.graphiql-editor').first().textContent()) ?? '').replace(/\s+/g, ' '))
      .toContain('query CategoryPage');
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(resultText, { timeout: 20_000 }).toContain('"productId": "monitor-27"');
  });

  it('builds a query by clicking in the Explorer, then runs it', async () => {
    await page.getByRole('button', { name: 'New tab' }).click();
    await page.getByRole('button', { name: 'Show GraphiQL Explorer' }).click();
    const explorer = page.locator('.graphiql-explorer-root');
    // The schema comes by introspection; the root fields show once it has.
    const products = explorer.locator('.graphiql-explorer-products').first();
    await products.getByText('products', { exact: true }).click({ timeout: 20_000 });
    const nodes = products.locator('.graphiql-explorer-nodes').first();
    await nodes.getByText('nodes', { exact: true }).click();
    await nodes.getByText('name', { exact: true }).click();
    await nodes.getByText('productId', { exact: true }).click();
    await expect
      .poll(async () => ((await page.locator('.graphiql-editor').first().textContent()) ?? '').replace(/\s+/g, ' '))
      .toMatch(/products \{ nodes \{ name productId \} \}/);
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(resultText, { timeout: 20_000 }).toContain('"productId": "monitor-27"');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'playground-explorer.png') });
    await page.getByRole('button', { name: 'Hide GraphiQL Explorer' }).click();
  });

  it('offers a headers editor', async () => {
    await page.getByText('Headers', { exact: true }).click();
    await expect.poll(async () => page.locator('.graphiql-editor-tool').textContent()).toContain('{');
  });

  const switchTo = async (tab: string, documentStart: string) => {
    await page.locator('.graphiql-tab', { hasText: tab }).click();
    await page.locator('.graphiql-tab-active', { hasText: tab }).waitFor();
    await expect
      .poll(async () => ((await page.locator('.graphiql-editor').first().textContent()) ?? '').replace(/\s+/g, ' '))
      .toContain(documentStart);
  };

  it('places a new order on every run of the PlaceOrder tab (a fresh idempotency key each time)', async () => {
    await switchTo('PlaceOrder', 'mutation PlaceOrder');
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => placedOrders.length, { timeout: 20_000 }).toBe(1);
    await expect.poll(resultText, { timeout: 20_000 }).toContain('"orderId"');
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => placedOrders.length, { timeout: 20_000 }).toBe(2);
    expect(placedOrders.map((order) => order.replayed)).toEqual([false, false]);
    expect(placedOrders[0]?.orderId).toMatch(/./);
    expect(placedOrders[1]?.orderId).not.toBe(placedOrders[0]?.orderId);
  });

  it('sends a subscription over WebSocket even when Run follows the tab switch at once', async () => {
    const before = sockets.length;
    await page.locator('.graphiql-tab', { hasText: 'WatchMyOrders' }).click();
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => sockets.length, { timeout: 20_000 }).toBeGreaterThan(before);
    const queries = graphqlPosts.map((body) => String((JSON.parse(body) as { query?: unknown }).query));
    expect(queries.filter((query) => query.includes('subscription WatchMyOrders'))).toEqual([]);
    await page.locator('.graphiql-execute-button').click(); // stop
  });

  it('shows a refused token at once, with the reason', async () => {
    await switchTo('WatchMyOrders', 'subscription WatchMyOrders');
    await page.getByText('Headers', { exact: true }).click();
    const headersEditor = page.locator('.graphiql-editor-tool .monaco-editor').last();
    await headersEditor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('{ "Authorization": "Bearer not.a.token" }');
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(resultText, { timeout: 5_000 }).toContain('4401: Unauthorized: The token is not a valid JWT');
  });

  it('made no request to any other host and loaded every asset', () => {
    expect(foreignRequests).toEqual([]);
    expect(failedResponses).toEqual([]);
  });
});
