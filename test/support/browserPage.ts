/**
 * What the browser tests of a page share: Debian's chromium through playwright-core, a static file
 * server for a build, the console errors a page wrote (minus the network failures a test caused on
 * purpose), and axe-core's serious and critical findings.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
};

/** Serves the files of `root` (index.html for `/`) on a free port of 127.0.0.1; nothing else. */
export async function serveStatic(root: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/**
 * The page's console errors and uncaught exceptions. While `faults()` runs, the browser's own
 * "Failed to load resource" lines (the request the test broke, a 401 it provoked) are expected and
 * not counted; any other line is.
 */
export function consoleErrors(page: Page) {
  const errors: string[] = [];
  let inFault = 0;
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    if (inFault > 0 && message.text().startsWith('Failed to load resource')) return;
    errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  return {
    errors,
    /** Runs `step`, a step that breaks requests on purpose. */
    async faults<T>(step: () => Promise<T>): Promise<T> {
      inFault += 1;
      try {
        const result = await step();
        // A round trip to the page: the browser's log lines of what the step broke, sent before
        // its answer on the same connection, have arrived by then.
        await page.evaluate('0');
        return result;
      } finally {
        inFault -= 1;
      }
    },
  };
}

/** axe-core's serious and critical violations on the page as it is, as `rule: target` lines. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .flatMap((violation) => violation.nodes.map((node) => `${violation.id}: ${node.target.join(' ')}`));
}
