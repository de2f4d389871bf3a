/**
 * The storefront example (examples/storefront) in Debian's chromium: built once with Vite,
 * served statically from another origin than the API (CORS), talking to a server that runs
 * only trusted documents (PERSISTED_ONLY, the storefront's manifest published to the registry).
 * Clicks through browsing, sorting, filtering, a product page, the cart, a refused and a placed
 * order, "my orders" with infinite scroll, and the placed order's status changing on screen
 * when an admin ships it from another client, then a product's rating and reviews: paged, sorted,
 * and the shopper's own review written (a refused title shown beside its field), edited and
 * deleted. STOREFRONT_SCREENSHOT=<file.png> also saves a screenshot of the catalog there, and
 * one of the product page with its reviews beside it (npm run storefront:screenshot).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../../src/db/batchWrite.js';
import { publishManifest } from '../../src/db/documentRegistry.js';
import { readManifest } from '../../src/pipeline/manifestFormats.js';
import { demoItems, reviewItems } from '../../src/seed/seed.js';
import { reviewIdOf } from '../../src/table/entities/review.js';
import type { ReviewModel } from '../../src/table/models.js';
import { startTestServer, tokenFor } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';

const STOREFRONT = path.join(import.meta.dirname, '..', '..', 'examples', 'storefront');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
};

let server: TestServer;
let site: Server;
let siteUrl: string;
let outDir: string;
let browser: Browser;
let page: Page;
/** Every request body the page sent to the API, and every failed response. */
const apiBodies: string[] = [];
const failures: string[] = [];

/** Serves the build's files, index.html for `/`; nothing else. */
async function serveStatic(root: string): Promise<Server> {
  const httpServer = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const file = path.join(root, pathname === '/' ? 'index.html' : pathname);
    if (!file.startsWith(root)) return void res.writeHead(404).end();
    readFile(file).then(
      (body) =>
        res
          .writeHead(200, { 'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream' })
          .end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  return httpServer;
}

/** A product without demo reviews, given seven by other shoppers (newest first: the last one). */
const REVIEWED = 'grinder-burr';
const SEEDED_STARS = [5, 3, 4, 1, 5, 2, 4];
const seededReviews = (): ReviewModel[] =>
  SEEDED_STARS.map((rating, i) => {
    const at = new Date(Date.parse('2026-06-01T10:00:00.000Z') + i * 3_600_000).toISOString();
    return {
      kind: 'Review',
      reviewId: reviewIdOf(REVIEWED, `shopper-${i + 1}`),
      productId: REVIEWED,
      authorId: `shopper-${i + 1}`,
      rating,
      title: `Review ${i + 1}`,
      body: i % 3 === 0 ? '' : `What shopper ${i + 1} thinks of it.`,
      authorName: `Shopper ${i + 1}`,
      verifiedPurchase: i % 2 === 0,
      createdAt: at,
      updatedAt: at,
      version: 1,
    };
  });

/** The admin's own client (not the storefront): its document is published as an app of its own. */
const SHIP =
  'mutation Ship($input: UpdateOrderStatusInput!) { updateOrderStatus(input: $input) { userErrors { code } } }';

beforeAll(async () => {
  outDir = await mkdtemp(path.join(tmpdir(), 'storefront-'));
  site = await serveStatic(outDir);
  const address = site.address() as { port: number };
  siteUrl = `http://127.0.0.1:${address.port}`;
  server = await startTestServer({
    streams: true,
    persistedOnly: true,
    documentsRefreshMs: 250,
    playground: false,
    cors: { origins: [siteUrl], allowLocalhost: false },
  });
  await putItems(server.dynamo.doc, server.tableName, [...demoItems(), ...reviewItems(seededReviews())]);
  const manifest = JSON.parse(readFileSync(path.join(STOREFRONT, 'src', 'gql', 'persisted-documents.json'), 'utf8'));
  await publishManifest(
    { doc: server.dynamo.doc, tableName: server.tableName },
    'storefront',
    '0.1.0',
    readManifest(manifest).documents,
  );
  await publishManifest(
    { doc: server.dynamo.doc, tableName: server.tableName },
    'back-office',
    '1.0.0',
    readManifest({ [`sha256:${createHash('sha256').update(SHIP).digest('hex')}`]: SHIP }).documents,
  );
  await build({
    configFile: path.join(STOREFRONT, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
    define: {
      'import.meta.env.VITE_GRAPHQL_URL': JSON.stringify(server.url),
      'import.meta.env.VITE_TOKEN': JSON.stringify(await tokenFor('alice')),
    },
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
  page.on('request', (request) => {
    if (request.url() === server.url && request.method() === 'POST') apiBodies.push(request.postData() ?? '');
  });
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise((resolve) => site?.close(resolve));
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

const productNames = () => page.getByTestId('product').locator('.name').allTextContents();
const prices = async () =>
  (await page.getByTestId('product').locator('.price').allTextContents()).map((text) => Number(text.replace('$', '')));

/** More than one price, in order (`up` or `down`). */
const sorted = (shown: number[], way: 'up' | 'down') =>
  shown.length > 2 && shown.every((p, i) => i === 0 || (way === 'up' ? shown[i - 1]! <= p : shown[i - 1]! >= p));

describe('the storefront', () => {
  it('lists the catalog, sorted by name, from another origin, with trusted documents only', async () => {
    await page.goto(siteUrl);
    await expect.poll(async () => (await productNames()).length).toBeGreaterThan(5);
    const names = await productNames();
    expect(names).toEqual([...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
    if (process.env.STOREFRONT_SCREENSHOT) await page.screenshot({ path: process.env.STOREFRONT_SCREENSHOT });
  });

  it('sorts by price both ways and narrows to a price range and the stock on hand', async () => {
    await page.getByLabel('Sort').selectOption('price-desc');
    // The list is replaced when the answer arrives: poll until it shows the new order.
    await expect.poll(async () => sorted(await prices(), 'down')).toBe(true);
    await page.getByLabel('Sort').selectOption('price-asc');
    await expect.poll(async () => sorted(await prices(), 'up')).toBe(true);
    await page.getByLabel('Min price').fill('20');
    await page.getByLabel('Max price').fill('100');
    await expect
      .poll(async () => {
        const shown = await prices();
        return shown.length > 0 && shown.every((p) => p >= 20 && p <= 100);
      })
      .toBe(true);
    const ranged = await prices();
    expect(ranged).toEqual([...ranged].sort((a, b) => a - b));
    await page.getByLabel('In stock only').check();
    await expect.poll(async () => await page.getByTestId('product').locator('.stock.out').count()).toBe(0);
    await page.getByLabel('Min price').fill('');
    await page.getByLabel('Max price').fill('');
    await page.getByLabel('In stock only').uncheck();
  });

  it('searches by name prefix and opens a product page', async () => {
    await page.getByLabel('Search').fill('u');
    await expect
      .poll(async () => (await productNames()).every((name) => name.toLowerCase().startsWith('u')))
      .toBe(true);
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Sort').selectOption('name-asc');
    // Wait for the name-ordered list itself: the previous order's list is just as long.
    const byName = (names: string[]) =>
      names.length > 5 && names.every((name, i) => i === 0 || names[i - 1]!.toLowerCase() <= name.toLowerCase());
    await expect.poll(async () => byName(await productNames())).toBe(true);
    const first = page
      .getByTestId('product')
      .filter({ hasNot: page.locator('.stock.out') })
      .first();
    const name = (await first.locator('.name').textContent()) ?? '';
    await first.locator('.name').click();
    await expect.poll(() => page.locator('article.product h1').textContent()).toBe(name);
  });

  it('shows a too-large quantity’s userError beside its field, then places the order', async () => {
    await page.getByLabel('Quantity').fill('1000');
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.getByRole('button', { name: 'Place order' }).click();
    const error = page.getByTestId('cart-line').first().locator('[data-field="items.0.quantity"]');
    await expect.poll(() => error.textContent()).toMatch(/stock|quantity/i);
    await page.getByTestId('cart-line').first().getByRole('spinbutton').fill('1');
    await page.getByRole('button', { name: 'Place order' }).click();
    await expect
      .poll(() =>
        page
          .getByTestId('order-status')
          .textContent({ timeout: 5000 })
          .catch(() => ''),
      )
      .toBe('PLACED');
  });

  it('ships on screen when an admin ships the order from another client', async () => {
    const orderId = decodeURIComponent(new URL(page.url()).hash.split('/')[2] ?? '');
    expect(orderId).not.toBe('');
    const shipped = await server.gql(SHIP, { input: { orderId, status: 'SHIPPED' } });
    expect(shipped.data!.updateOrderStatus.userErrors).toEqual([]);
    await expect.poll(() => page.getByTestId('order-status').textContent(), { timeout: 15_000 }).toBe('SHIPPED');
  });

  it('lists my orders, newest first, and loads more as the list scrolls', async () => {
    await page.goto(`${siteUrl}/#/orders`);
    await expect.poll(() => page.getByTestId('order-row').count()).toBe(10);
    const total = Number((await page.getByTestId('orders-total').textContent())?.replace(/\D/g, ''));
    expect(total).toBe(31);
    for (let pages = 0; pages < 5 && (await page.getByTestId('order-row').count()) < total; pages++) {
      const shown = await page.getByTestId('order-row').count();
      await page.locator('.sentinel').scrollIntoViewIfNeeded();
      await expect.poll(() => page.getByTestId('order-row').count()).toBeGreaterThan(shown);
    }
    expect(await page.getByTestId('order-row').count()).toBe(total);
    await expect.poll(() => page.getByTestId('order-row').first().locator('.status').textContent()).toBe('SHIPPED');
  });

  it('shows a product’s rating and reviews, pages and sorts them, and lets the shopper write, edit and delete theirs', async () => {
    await page.goto(`${siteUrl}/#/product/${REVIEWED}`);
    const reviewCount = () => page.getByTestId('review-count').textContent();
    const histogram = () =>
      Promise.all(
        [5, 4, 3, 2, 1].map(async (stars) =>
          Number(await page.getByTestId(`stars-${stars}`).getAttribute('data-count')),
        ),
      );
    const titles = () => page.getByTestId('review').locator('h3').allTextContents();
    const stars = async () =>
      (
        await page
          .getByTestId('review')
          .locator('.stars')
          .evaluateAll((nodes) => nodes.map((n) => n.dataset.rating))
      ).map(Number);
    await expect.poll(reviewCount).toBe('7 reviews');
    expect(await histogram()).toEqual([2, 2, 1, 1, 1]);
    expect(await page.getByTestId('average').textContent()).toBe('3.4');
    // Newest first, five a page; "More reviews" reads on from the cursor.
    await expect.poll(titles).toEqual(['Review 7', 'Review 6', 'Review 5', 'Review 4', 'Review 3']);
    await page.getByRole('button', { name: 'More reviews' }).click();
    await expect
      .poll(titles)
      .toEqual(['Review 7', 'Review 6', 'Review 5', 'Review 4', 'Review 3', 'Review 2', 'Review 1']);
    await expect(page.getByRole('button', { name: 'More reviews' }).count()).resolves.toBe(0);
    if (process.env.STOREFRONT_SCREENSHOT) {
      await page.screenshot({
        path: process.env.STOREFRONT_SCREENSHOT.replace(/\.png$/, '-reviews.png'),
        fullPage: true,
      });
    }
    await page.getByLabel('Sort reviews').selectOption('HIGHEST_RATING');
    await expect.poll(stars).toEqual([5, 5, 4, 4, 3]);
    await page.getByLabel('Sort reviews').selectOption('LOWEST_RATING');
    await expect.poll(stars).toEqual([1, 2, 3, 4, 4]);
    await page.getByLabel('Sort reviews').selectOption('NEWEST');
    await expect.poll(titles).toEqual(['Review 7', 'Review 6', 'Review 5', 'Review 4', 'Review 3']);

    // A blank title is the server's INVALID_INPUT, shown beside the field, and nothing is written.
    await page.getByLabel('Stars', { exact: true }).selectOption('2');
    await page.getByLabel('Title', { exact: true }).fill('   ');
    await page.getByLabel('Review', { exact: true }).fill('Grinds evenly, a little loud.');
    await page.getByRole('button', { name: 'Post review' }).click();
    await expect.poll(() => page.locator('[data-field="title"]').count()).toBe(1);
    expect(await page.getByLabel('Title', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await reviewCount()).toBe('7 reviews');
    // Submitted from the keyboard: Enter in the title field.
    await page.getByLabel('Title', { exact: true }).fill('Even grind');
    await page.getByLabel('Title', { exact: true }).press('Enter');
    await expect.poll(reviewCount).toBe('8 reviews');
    await expect.poll(titles).toEqual(['Even grind', 'Review 7', 'Review 6', 'Review 5', 'Review 4']);
    expect(await histogram()).toEqual([2, 2, 1, 2, 1]);
    expect(await page.getByTestId('review').first().locator('.byline').textContent()).toContain('Alice Example');

    // The form is now the shopper's own review: edit its stars, then delete it.
    await expect.poll(() => page.getByRole('heading', { name: 'Your review' }).count()).toBe(1);
    await page.getByLabel('Stars', { exact: true }).selectOption('4');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(histogram).toEqual([2, 3, 1, 1, 1]);
    expect(await page.getByRole('status').textContent()).toBe('Your review was updated.');
    await page.getByRole('button', { name: 'Delete review' }).click();
    await expect.poll(reviewCount).toBe('7 reviews');
    await expect.poll(titles).toEqual(['Review 7', 'Review 6', 'Review 5', 'Review 4', 'Review 3']);
    expect(await histogram()).toEqual([2, 2, 1, 1, 1]);
    await expect.poll(() => page.getByRole('heading', { name: 'Write a review' }).count()).toBe(1);
  });

  it('sent every operation by document id, and nothing failed', () => {
    expect(apiBodies.length).toBeGreaterThan(5);
    for (const body of apiBodies) {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      expect(parsed.documentId).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(parsed.query).toBeUndefined();
    }
    expect(failures).toEqual([]);
  });
});
