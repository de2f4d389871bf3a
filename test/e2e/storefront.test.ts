/**
 * The storefront example (examples/storefront) in Debian's chromium, a shopper's whole journey:
 * built once with Vite, served from another origin than the API (CORS), against a server that runs
 * only trusted documents (the storefront's manifest published) and signs in the demo users
 * (DEV_SIGN_IN, with 2-minute tokens). Browse the shop and a category, sort, filter, a product
 * page, a sold-out product, the cart's exact totals, signing in, a line the shop cannot supply,
 * an order whose first answer is lost (one idempotency key, one order), its status going live,
 * cancelling, my orders, the token renewed before it expires, a refused session, the API down or
 * silent, an empty account, the keyboard. axe-core checks each main page (no serious or critical
 * finding), and the page writes no console error of its own.
 *
 * STOREFRONT_SCREENSHOTS=true also saves the main pages to examples/storefront/screenshots/
 * (`npm run storefront:screenshots`).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleErrors, launchChromium, seriousViolations } from '../support/browserPage.js';
import type { TestServer } from '../support/harness.js';
import { BACK_OFFICE, startStorefrontShop, STOREFRONT } from '../support/storefrontShop.js';
import type { StorefrontShop } from '../support/storefrontShop.js';

const SCREENSHOTS = process.env.STOREFRONT_SCREENSHOTS === 'true' ? path.join(STOREFRONT, 'screenshots') : undefined;
const TOKEN_SECONDS = 120;

let shop: StorefrontShop;
let server: TestServer;
let siteUrl: string;
let browser: Browser;
let page: Page;
let console_: ReturnType<typeof consoleErrors>;
const violations: Record<string, string[]> = {};
/** Every request the page sent to the API, as sent. */
const apiRequests: Request[] = [];

beforeAll(async () => {
  shop = await startStorefrontShop({ tokenSeconds: TOKEN_SECONDS });
  ({ server, siteUrl } = shop);
  browser = await launchChromium();
  // axe-core's Playwright integration wants a page of a context of its own.
  page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
  // The page's clock, so the test can move it to the token's renewal and past a request's timeout.
  await page.clock.install();
  console_ = consoleErrors(page);
  page.on('request', (request) => {
    if (request.url() === server.url && request.method() === 'POST') apiRequests.push(request);
  });
  if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await shop?.stop();
});

/** Checks the page with axe-core under `name`, and saves it as screenshots/<name>.png when asked. */
async function checkPage(name: string) {
  violations[name] = await seriousViolations(page);
  if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** expect.poll with room for a page to load and ask the API (its default is one second). */
const eventually = <T>(value: () => Promise<T> | T, timeout = 10_000) => expect.poll(value, { timeout });
const heading = () => page.getByRole('heading', { level: 1 });
/** The text of every alert (role=alert) on the page, or every status line. */
const mainNav = () => page.getByRole('navigation', { name: 'Main' });
const alerts = async () => (await page.getByRole('alert').allTextContents()).join(' | ');
const statuses = async () => (await page.getByRole('status').allTextContents()).join(' | ');
const productNames = () => page.getByTestId('product').locator('.name').allTextContents();
const prices = async () =>
  (await page.getByTestId('product').locator('.price').allTextContents()).map((text) =>
    Number(text.replace(/[$,]/g, '')),
  );
const inOrder = (values: number[], way: 'up' | 'down') =>
  values.length > 2 && values.every((v, i) => i === 0 || (way === 'up' ? values[i - 1]! <= v : values[i - 1]! >= v));
const bodyOf = (request: Request) =>
  JSON.parse(request.postData() ?? '{}') as { documentId?: string; query?: string; variables?: any };
const checkoutBodies = () =>
  apiRequests.map(bodyOf).filter((body) => body.variables?.input?.idempotencyKey !== undefined);
const orderCount = async (userId: string) =>
  (await server.gql(BACK_OFFICE.orderCount, { userId })).data?.user.orders.totalCount as number;

describe('the storefront', () => {
  it('opens the whole shop without a token, and browses a category', async () => {
    await page.goto(siteUrl);
    await eventually(async () => (await productNames()).length).toBe(12);
    await eventually(() => heading().textContent()).toBe('All products');
    const names = await productNames();
    expect(names).toEqual([...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
    await checkPage('catalog');
    await page
      .getByRole('navigation', { name: 'Categories' })
      .getByRole('link', { name: /^Books/ })
      .click();
    await eventually(() => heading().textContent()).toBe('Books');
    await expect
      .poll(productNames)
      .toEqual([
        'Designing Data-Intensive Applications',
        'Production Ready GraphQL',
        'Site Reliability Engineering',
        'The DynamoDB Book',
      ]);
    await eventually(() => page.getByText('4 products').count()).toBe(1);
    expect(apiRequests.every((request) => request.headers().authorization === undefined)).toBe(true);
  });

  it('sorts by price and name both ways, and narrows by price, stock and the start of a name', async () => {
    await page.getByRole('link', { name: 'All', exact: true }).click();
    const sort = page.getByLabel('Sort by');
    await sort.selectOption({ label: 'Price, high to low' });
    await eventually(async () => inOrder(await prices(), 'down')).toBe(true);
    await sort.selectOption({ label: 'Price, low to high' });
    await eventually(async () => inOrder(await prices(), 'up')).toBe(true);
    expect(page.url()).toContain('sort=price-asc');
    await page.getByLabel('From', { exact: true }).fill('20');
    await page.getByLabel('To', { exact: true }).fill('100');
    await eventually(async () => (await prices()).every((p) => p >= 20 && p <= 100)).toBe(true);
    const bivy = page.getByTestId('product').filter({ hasText: 'Bivy Sack' });
    expect(await bivy.locator('.stock').textContent()).toBe('Sold out');
    expect(await bivy.getByRole('button').isDisabled()).toBe(true);
    await page.getByLabel('In stock only').check();
    await eventually(() => page.getByTestId('product').filter({ hasText: 'Bivy Sack' }).count()).toBe(0);
    await page.getByLabel('To', { exact: true }).fill('abc');
    await eventually(alerts).toBe('Enter prices like 20 or 19.99.');
    await page.getByLabel('To', { exact: true }).fill('');
    await page.getByLabel('From', { exact: true }).fill('');
    await page.getByLabel('Name starts with').fill('zz');
    await eventually(() => page.getByText('No products match these filters.').count()).toBe(1);
    await page.getByRole('button', { name: 'Clear the filters' }).click();
    await page.getByLabel('Name starts with').fill('de');
    await eventually(productNames).toEqual(['Designing Data-Intensive Applications']);
    await page.getByLabel('Name starts with').fill('');
    await sort.selectOption({ label: 'Name, Z to A' });
    await eventually(async () => (await productNames())[0]).toBe('Wireless Mouse');
    await page.getByRole('button', { name: 'Show more products' }).click();
    await eventually(async () => (await productNames()).length).toBe(16);
  });

  it('shows a product page, and keeps a sold-out product out of the cart', async () => {
    await page.goto(`${siteUrl}/#/product/bivy-sack`);
    await eventually(() => heading().textContent()).toBe('Bivy Sack');
    expect(await page.getByText('This product is sold out for now.').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Add to cart' }).count()).toBe(0);
    await page.goto(`${siteUrl}/#/product/kettle-gooseneck`);
    await eventually(() => heading().textContent()).toBe('Gooseneck Kettle');
    expect(await page.locator('.summary .price').textContent()).toBe('$59.00');
    await page.getByLabel('Quantity').fill('2');
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await eventually(statuses).toContain('2 × Gooseneck Kettle added');
    await checkPage('product');
  });

  it('adds up the cart in exact decimals', async () => {
    await page.goto(`${siteUrl}/#/product/bottle-steel`);
    await page.getByLabel('Quantity').fill('3');
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.getByTestId('cart-link').click();
    await eventually(() => heading().textContent()).toBe('Your cart');
    // 3 × 19.99 is 59.97 in cents; in floating point it would be 59.970000000000006.
    expect(await page.getByTestId('line-total').allTextContents()).toEqual(['$118.00', '$59.97']);
    expect(await page.getByTestId('cart-total').textContent()).toBe('$177.97');
    await page.getByLabel('Quantity of Steel Water Bottle').fill('1');
    await eventually(() => page.getByTestId('cart-total').textContent()).toBe('$137.99');
    await checkPage('cart');
  });

  it('asks to sign in to order, signs in with the development sign-in, and comes back to the cart', async () => {
    await page.getByRole('link', { name: 'Sign in to place your order' }).click();
    await eventually(() => heading().textContent()).toBe('Sign in');
    await checkPage('sign-in');
    await console_.faults(async () => {
      await page.getByLabel('User').fill('mallory');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await eventually(alerts).toMatch(/Only the demo users sign in here/);
    });
    await page.getByLabel('User').fill('alice');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await eventually(() => heading().textContent()).toBe('Your cart');
    expect(await page.getByText('Signed in as alice').count()).toBe(1);
  });

  it('shows a line the shop cannot supply beside it, then places the order once across a lost answer', async () => {
    const before = await orderCount('alice');
    await page.getByLabel('Quantity of Gooseneck Kettle').fill('1000');
    await page.getByRole('button', { name: /^Place order/ }).click();
    const kettle = page.getByTestId('cart-line').filter({ hasText: 'Gooseneck Kettle' });
    await eventually(() => kettle.locator('[data-field="items.0.quantity"]').textContent()).toMatch(/stock/i);
    await page.getByLabel('Quantity of Gooseneck Kettle').fill('2');
    // The order is placed, but its answer never reaches the page.
    await console_.faults(async () => {
      await page.route(server.url, async (route) => {
        if (!route.request().postData()?.includes('idempotencyKey')) return route.continue();
        await route.fetch();
        await route.abort('connectionreset');
      });
      await page.getByRole('button', { name: /^Place order/ }).click();
      await eventually(alerts).toMatch(/could not confirm your order/);
      await page.unroute(server.url);
    });
    expect(await orderCount('alice')).toBe(before + 1);
    await page.getByRole('button', { name: /^Place order/ }).click();
    await eventually(() => page.getByText('Thank you: your order is placed.').count()).toBe(1);
    const [lost, retried] = checkoutBodies().slice(-2);
    expect(retried?.variables.input.idempotencyKey).toBe(lost?.variables.input.idempotencyKey);
    expect(await orderCount('alice')).toBe(before + 1);
    expect(await page.getByTestId('cart-link').textContent()).toMatch(/^Cart 0/);
  });

  it('shows the whole order, its status live, and a cancel button only while it is placed', async () => {
    const orderId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]?.split('?')[0] ?? '');
    expect(orderId.length).toBeGreaterThan(12);
    await eventually(() => heading().textContent()).toBe(`Order ${orderId}`);
    expect(await page.getByTestId('order-status').textContent()).toBe('Placed');
    expect(await page.locator('tfoot .total').textContent()).toBe('$137.99');
    expect(await page.getByRole('button', { name: 'Cancel this order' }).count()).toBe(1);
    await checkPage('order');
    const shipped = await server.gql(BACK_OFFICE.ship, { input: { orderId, status: 'SHIPPED' } });
    expect(shipped.data?.updateOrderStatus.userErrors).toEqual([]);
    await eventually(() => page.getByTestId('order-status').textContent(), 15_000).toBe('Shipped');
    expect(await page.getByRole('button', { name: 'Cancel this order' }).count()).toBe(0);

    await page.goto(`${siteUrl}/#/product/lamp-head`);
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.goto(`${siteUrl}/#/cart`);
    await page.getByRole('button', { name: /^Place order/ }).click();
    await eventually(() => page.getByText('Thank you: your order is placed.').count()).toBe(1);
    await page.getByRole('button', { name: 'Cancel this order' }).click();
    await eventually(() => page.getByTestId('order-status').textContent()).toBe('Cancelled');
    expect(await page.getByRole('button', { name: 'Cancel this order' }).count()).toBe(0);
  });

  it('lists my orders newest first, with their full ids, a page at a time', async () => {
    await mainNav().getByRole('link', { name: 'My orders' }).click();
    await eventually(() => page.getByTestId('order-row').count()).toBe(10);
    expect(await page.getByTestId('orders-total').textContent()).toBe(' (32)');
    const newest = page.getByTestId('order-row').first();
    expect(await newest.getByText('Cancelled').count()).toBe(1);
    const ids = await page.locator('.order-id').allTextContents();
    expect(new Set(ids).size).toBe(10);
    expect(ids.every((id) => id.length > 12)).toBe(true);
    await checkPage('orders');
    await page.getByRole('button', { name: 'Show older orders' }).click();
    await eventually(() => page.getByTestId('order-row').count()).toBe(20);
    await newest.getByRole('link').click();
    await eventually(() => page.getByTestId('order-status').textContent()).toBe('Cancelled');
  });

  it('renews the token before it expires', async () => {
    const renewals = () => apiRequests.length;
    const tokenOf = (request: Request) => request.headers().authorization;
    const signIn = page.waitForRequest((request) => request.url().endsWith('/auth/dev/token'));
    await page.clock.fastForward(TOKEN_SECONDS * 850);
    const renewal = await signIn;
    expect(renewal.headers().authorization).toMatch(/^Bearer /);
    const renewed = await renewal.response();
    expect(renewed?.status()).toBe(200);
    const { access_token: token } = (await renewed!.json()) as { access_token: string };
    const sent = renewals();
    await mainNav().getByRole('link', { name: 'My orders' }).click();
    await eventually(() => apiRequests.slice(sent).map(tokenOf)).toContain(`Bearer ${token}`);
    expect(token).not.toBe(renewal.headers().authorization?.slice('Bearer '.length));
  });

  it('ends a refused session with a way to sign in again, and keeps the shop open', async () => {
    // As if the API no longer trusted the token (a rotated key): every request's token is refused.
    await console_
      .faults(async () => {
        await page.route(server.url, (route) =>
          route.continue({ headers: { ...route.request().headers(), authorization: 'Bearer not.a.token' } }),
        );
        await page.getByRole('link', { name: 'Shop' }).click();
        await mainNav().getByRole('link', { name: 'My orders' }).click();
        await eventually(alerts).toMatch(/Your session has ended\. Sign in again to see your orders\./);
      })
      .finally(() => page.unroute(server.url));
    expect(await page.locator('header').getByRole('link', { name: 'Sign in' }).count()).toBe(1);
    await page.getByRole('link', { name: 'Shop' }).click();
    await eventually(async () => (await productNames()).length).toBe(12);
    expect(await statuses()).toMatch(/Your session has ended/);
  });

  it('says so when the API is down or answers no JSON, and recovers', async () => {
    await console_
      .faults(async () => {
        await page.route(server.url, (route) => route.abort('connectionrefused'));
        await page.getByRole('link', { name: /^Kitchen/ }).click();
        await eventually(alerts).toMatch(/can't be reached right now/);
        await page.unroute(server.url);
        await page.route(server.url, (route) =>
          route.fulfill({ status: 502, contentType: 'text/html', body: '<h1>502 Bad Gateway</h1>' }),
        );
        await page.getByRole('button', { name: 'Try again' }).click();
        await eventually(alerts).toMatch(/can't be reached right now/);
      })
      .finally(() => page.unroute(server.url));
    expect(await page.locator('main').textContent()).not.toMatch(/JSON/);
    await page.getByRole('button', { name: 'Try again' }).click();
    await eventually(productNames).toEqual(['Burr Coffee Grinder', 'Cast Iron Pan', 'Gooseneck Kettle']);
  });

  it('gives up on an answer that does not come, instead of loading forever', async () => {
    await page.route(server.url, () => undefined); // held: never answered
    await page.goto(`${siteUrl}/#/category/outdoors`);
    await eventually(statuses).toMatch(/Loading products/);
    await console_
      .faults(async () => {
        await page.clock.fastForward(16_000);
        await eventually(alerts).toMatch(/taking too long/);
      })
      .finally(() => page.unroute(server.url));
    await page.getByRole('button', { name: 'Try again' }).click();
    await eventually(async () => (await productNames()).length).toBe(4);
  });

  it('tells a customer without orders that there are none', async () => {
    await page.goto(`${siteUrl}/#/sign-in?then=orders`);
    await page.getByLabel('User').fill('carol');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await eventually(() => page.getByText('You have no orders yet.').count()).toBe(1);
  });

  it('works from the keyboard: a skip link, focus on each new page, a product added with Enter', async () => {
    await page.goto(`${siteUrl}/#/`);
    await eventually(async () => (await productNames()).length).toBe(12);
    const focused = page.locator(':focus');
    // The skip link comes first: before the header's first link.
    await page.getByRole('link', { name: 'Trailhead Outfitters' }).focus();
    await page.keyboard.press('Shift+Tab');
    expect(await focused.textContent()).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await focused.getAttribute('id')).toBe('main');
    await page.getByRole('link', { name: 'Head Lamp' }).focus();
    await page.keyboard.press('Enter');
    // The product page's heading takes the focus (the link had the same words).
    await eventually(() => page.locator('h1:focus').textContent()).toBe('Head Lamp');
    await page.keyboard.press('Tab');
    expect(await focused.getAttribute('type')).toBe('number');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await eventually(statuses).toContain('Head Lamp added');
  });

  it('had no serious or critical accessibility finding on any main page', () => {
    expect(Object.keys(violations)).toEqual(['catalog', 'product', 'cart', 'sign-in', 'order', 'orders']);
    expect(violations).toEqual(Object.fromEntries(Object.keys(violations).map((name) => [name, []])));
  });

  it('wrote no console error, and sent every operation by document id, the catalogue without a token', async () => {
    expect(console_.errors).toEqual([]);
    expect(apiRequests.length).toBeGreaterThan(20);
    for (const request of apiRequests) {
      const body = bodyOf(request);
      expect(body.documentId).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(body.query).toBeUndefined();
    }
  });
});
