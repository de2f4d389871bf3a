/**
 * A frontend on another origin, as a developer's Vite app would be: a page served by a second
 * HTTP server calls the API from a real browser (Debian's chromium). The allowed origin gets
 * its answers (preflighted POST with a token, persisted GET, WebSocket); the same page served
 * from an origin not on the list is blocked by the browser itself.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItems } from '../../src/db/batchWrite.js';
import { loadPersistedDocuments } from '../../src/pipeline/documents/persistedDocuments.js';
import { demoItems } from '../../src/seed/seed.js';
import { startTestServer, tokenFor } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let api: TestServer;
let frontend: http.Server;
let allowedOrigin: string;
let otherOrigin: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  frontend = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>shop</title><p>frontend</p>');
  });
  await new Promise<void>((resolve) => frontend.listen(0, '127.0.0.1', resolve));
  const { port } = frontend.address() as AddressInfo;
  // One server, two origins: the browser tells 127.0.0.1 and localhost apart.
  allowedOrigin = `http://127.0.0.1:${port}`;
  otherOrigin = `http://localhost:${port}`;
  api = await startTestServer({ cors: { origins: [allowedOrigin], allowLocalhost: false }, cacheMaxAgeSeconds: 60 });
  await putItems(api.dynamo.doc, api.tableName, demoItems());
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  page = await browser.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.stop();
  await new Promise((resolve) => frontend?.close(resolve));
});

interface Outcome {
  status?: number;
  body?: any;
  blocked?: string;
  cacheControl?: string | null;
}

/** A POST with a bearer token: a non-simple request, so the browser sends a preflight first. */
const postFromPage = (token: string) =>
  page.evaluate(
    async ({ url, token }): Promise<Outcome> => {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ query: '{ viewer { userId name } }' }),
        });
        return { status: response.status, body: await response.json() };
      } catch (error) {
        return { blocked: String(error) };
      }
    },
    { url: api.url, token },
  );

const getFromPage = (url: string) =>
  page.evaluate(async (url): Promise<Outcome> => {
    try {
      const response = await fetch(url, { headers: { 'apollo-require-preflight': 'true' } });
      return {
        status: response.status,
        body: await response.json(),
        cacheControl: response.headers.get('cache-control'),
      };
    } catch (error) {
      return { blocked: String(error) };
    }
  }, url);

const socketFromPage = () =>
  page.evaluate(
    (url) =>
      new Promise<string>((resolve) => {
        const socket = new WebSocket(url, 'graphql-transport-ws');
        socket.onopen = () => {
          socket.close();
          resolve('open');
        };
        socket.onerror = () => resolve('refused');
      }),
    api.url.replace(/^http/, 'ws'),
  );

const categoryPageUrl = () => {
  const [hash] = [...loadPersistedDocuments()].find(([, document]) => document.includes('query CategoryPage('))!;
  const params = new URLSearchParams({
    operationName: 'CategoryPage',
    variables: JSON.stringify({ category: 'electronics' }),
    extensions: JSON.stringify({ persistedQuery: { version: 1, sha256Hash: hash } }),
  });
  return `${api.url}?${params.toString()}`;
};

describe('a frontend on an allowed origin', () => {
  beforeAll(async () => {
    await page.goto(allowedOrigin);
  });

  it('calls the API with a token (preflighted POST)', async () => {
    const outcome = await postFromPage(await tokenFor('alice'));
    expect(outcome.blocked).toBeUndefined();
    expect(outcome.status).toBe(200);
    expect(outcome.body.data.viewer).toEqual({ userId: 'alice', name: 'Alice Example' });
  });

  it('reads a public persisted GET that the browser may cache', async () => {
    const outcome = await getFromPage(categoryPageUrl());
    expect(outcome.status).toBe(200);
    expect(outcome.cacheControl).toBe('public, max-age=60');
    expect(outcome.body.data.products.nodes.length).toBeGreaterThan(0);
  });

  it('opens the subscription WebSocket', async () => {
    expect(await socketFromPage()).toBe('open');
  });
});

describe('the same frontend on an origin not on the list', () => {
  beforeAll(async () => {
    await page.goto(otherOrigin);
  });

  it('is blocked by the browser, for POST and GET', async () => {
    expect((await postFromPage(await tokenFor('alice'))).blocked).toMatch(/Failed to fetch/);
    expect((await getFromPage(categoryPageUrl())).blocked).toMatch(/Failed to fetch/);
  });

  it('cannot open the WebSocket', async () => {
    expect(await socketFromPage()).toBe('refused');
  });
});
