/**
 * The storefront's reviews in Debian's chromium, on the same test shop as the shopper's journey
 * (test/support/storefrontShop.ts): a product given seven reviews, its rating under its name and
 * its histogram, the reviews five at a time newest first, highest and lowest rated; then a shopper
 * signs in from the review form, has a blank title refused beside its field, posts from the
 * keyboard, edits the stars and deletes the review, with the rating following every write.
 * axe-core checks the page with the form shown, and the page writes no console error.
 *
 * STOREFRONT_SCREENSHOTS=true also saves the page as examples/storefront/screenshots/reviews.png.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../../src/db/batchWrite.js';
import { reviewItems } from '../../src/seed/seed.js';
import { reviewIdOf } from '../../src/table/entities/review.js';
import type { ReviewModel } from '../../src/table/models.js';
import { consoleErrors, launchChromium, seriousViolations } from '../support/browserPage.js';
import { startStorefrontShop, STOREFRONT } from '../support/storefrontShop.js';
import type { StorefrontShop } from '../support/storefrontShop.js';

const SCREENSHOTS = process.env.STOREFRONT_SCREENSHOTS === 'true' ? path.join(STOREFRONT, 'screenshots') : undefined;
/** A product without demo reviews, given seven by other shoppers, an hour apart (the last is the newest). */
const PRODUCT = 'grinder-burr';
const SEEDED_STARS = [5, 3, 4, 1, 5, 2, 4];
const seededReviews = (): ReviewModel[] =>
  SEEDED_STARS.map((rating, i) => {
    const at = new Date(Date.parse('2026-06-01T10:00:00.000Z') + i * 3_600_000).toISOString();
    return {
      kind: 'Review',
      reviewId: reviewIdOf(PRODUCT, `shopper-${i + 1}`),
      productId: PRODUCT,
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

let shop: StorefrontShop;
let browser: Browser;
let page: Page;
let console_: ReturnType<typeof consoleErrors>;
const apiRequests: Request[] = [];

beforeAll(async () => {
  shop = await startStorefrontShop({ tokenSeconds: 600 });
  await putItems(shop.server.dynamo.doc, shop.server.tableName, reviewItems(seededReviews()));
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
  console_ = consoleErrors(page);
  page.on('request', (request) => {
    if (request.url() === shop.server.url && request.method() === 'POST') apiRequests.push(request);
  });
  if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await shop?.stop();
});

const eventually = <T>(value: () => Promise<T> | T, timeout = 10_000) => expect.poll(value, { timeout });
const reviewCount = () => page.getByTestId('review-count').textContent();
const histogram = () =>
  Promise.all(
    [5, 4, 3, 2, 1].map(async (stars) => Number(await page.getByTestId(`stars-${stars}`).getAttribute('data-count'))),
  );
const titles = () => page.getByTestId('review').locator('h3').allTextContents();
const stars = async () =>
  (
    await page
      .getByTestId('review')
      .locator('.stars')
      .evaluateAll((nodes) => nodes.map((n) => n.dataset.rating))
  ).map(Number);
const bodyOf = (request: Request) =>
  JSON.parse(request.postData() ?? '{}') as {
    documentId?: string;
    query?: string;
    variables?: Record<string, unknown>;
  };
const NEWEST = ['Review 7', 'Review 6', 'Review 5', 'Review 4', 'Review 3'];

describe('a product’s reviews in the storefront', () => {
  it('shows the rating, the histogram and the newest reviews, read with the product', async () => {
    await page.goto(`${shop.siteUrl}/#/product/${PRODUCT}`);
    await eventually(reviewCount).toBe('7 reviews');
    expect(await page.locator('.summary [data-testid="average"]').textContent()).toBe('3.4');
    expect(await histogram()).toEqual([2, 2, 1, 1, 1]);
    expect(await titles()).toEqual(NEWEST);
    // The product page asks for the product with its rating and first reviews (ProductDetails),
    // without a token; nothing asks for the reviews on their own.
    const reads = apiRequests.filter((request) => bodyOf(request).variables?.productId === PRODUCT);
    expect(new Set(reads.map((request) => JSON.stringify(bodyOf(request).variables)))).toEqual(
      new Set([JSON.stringify({ productId: PRODUCT, reviews: 5 })]),
    );
    expect(reads.every((request) => request.headers().authorization === undefined)).toBe(true);
  });

  it('reads on with More reviews, and sorts by stars both ways', async () => {
    await page.getByRole('button', { name: 'More reviews' }).click();
    await eventually(titles).toEqual([...NEWEST, 'Review 2', 'Review 1']);
    expect(await page.getByRole('button', { name: 'More reviews' }).count()).toBe(0);
    await page.getByLabel('Sort reviews').selectOption({ label: 'Highest rated' });
    await eventually(stars).toEqual([5, 5, 4, 4, 3]);
    await page.getByRole('button', { name: 'More reviews' }).click();
    await eventually(stars).toEqual([5, 5, 4, 4, 3, 2, 1]);
    await page.getByLabel('Sort reviews').selectOption({ label: 'Lowest rated' });
    await eventually(stars).toEqual([1, 2, 3, 4, 4]);
    await page.getByLabel('Sort reviews').selectOption({ label: 'Newest first' });
    await eventually(titles).toEqual(NEWEST);
  });

  it('signs in from the review form and comes back to the product', async () => {
    await page.getByRole('link', { name: 'Sign in to write a review' }).click();
    await page.getByLabel('User').fill('alice');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await eventually(() => page.getByRole('heading', { name: 'Write a review' }).count()).toBe(1);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Burr Coffee Grinder');
    expect(await seriousViolations(page)).toEqual([]);
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'reviews.png'), fullPage: true });
  });

  it('shows a refused title beside its field, then posts from the keyboard', async () => {
    const title = page.getByLabel('Title', { exact: true });
    await page.getByLabel('Stars', { exact: true }).selectOption({ label: '2 stars' });
    await title.fill('   ');
    await page.getByLabel('Review', { exact: true }).fill('Grinds evenly, a little loud.');
    await page.getByRole('button', { name: 'Post review' }).click();
    await eventually(() => page.locator('[data-field="title"]').count()).toBe(1);
    expect(await title.getAttribute('aria-invalid')).toBe('true');
    expect(await reviewCount()).toBe('7 reviews');
    await title.fill('Even grind');
    await title.press('Enter');
    await eventually(reviewCount).toBe('8 reviews');
    await eventually(titles).toEqual(['Even grind', ...NEWEST.slice(0, 4)]);
    expect(await histogram()).toEqual([2, 2, 1, 2, 1]);
    expect(await page.getByTestId('review').first().locator('.byline').textContent()).toContain('Alice Example');
    expect(await page.locator('.reviews [role="status"]').textContent()).toBe('Thank you for your review.');
  });

  it('edits the stars of the shopper’s own review, then deletes it', async () => {
    await eventually(() => page.getByRole('heading', { name: 'Your review' }).count()).toBe(1);
    await page.getByLabel('Stars', { exact: true }).selectOption({ label: '4 stars' });
    await page.getByRole('button', { name: 'Save changes' }).click();
    await eventually(histogram).toEqual([2, 3, 1, 1, 1]);
    await eventually(() => page.locator('.reviews [role="status"]').textContent()).toBe('Your review was updated.');
    await page.getByRole('button', { name: 'Delete review' }).click();
    await eventually(reviewCount).toBe('7 reviews');
    await eventually(titles).toEqual(NEWEST);
    expect(await histogram()).toEqual([2, 2, 1, 1, 1]);
    await eventually(() => page.getByRole('heading', { name: 'Write a review' }).count()).toBe(1);
  });

  it('wrote no console error, and sent every operation by document id', () => {
    expect(console_.errors).toEqual([]);
    for (const request of apiRequests) {
      const body = bodyOf(request);
      expect(body.documentId).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(body.query).toBeUndefined();
    }
  });
});
