/**
 * Stopping the node:http server: it stops accepting connections at once, lets a request in
 * flight finish, does not wait for idle keep-alive connections, and closes what is still busy
 * once SHUTDOWN_GRACE_MS has passed.
 */
import http from 'node:http';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer } from './support/harness.js';
import type { TestServer } from './support/harness.js';

/**
 * Once armed, holds every GetItem/BatchGetItem of the server's client until released (start-up
 * reads the document registry, which must pass); `waiting` resolves once one waits.
 */
function gate() {
  let armed = false;
  let release!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const waiting = new Promise<void>((resolve) => (entered = resolve));
  const install = (client: DynamoDBClient) =>
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (armed && /^(Get|BatchGet)Item/.test(context.commandName ?? '')) {
          entered();
          await open;
        }
        return next(args);
      },
      { step: 'initialize', name: 'testShutdownGate' },
    );
  return { install, release, waiting, arm: () => (armed = true) };
}

/** One POST over its own agent, so that the test controls the connection. */
function post(url: string, agent: http.Agent, query: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } });
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(JSON.stringify({ query }));
  });
}

/** Whether a fresh connection to `url`'s port is accepted. */
const accepts = (url: string): Promise<boolean> =>
  new Promise((resolve) => {
    const request = http.get(url.replace('/graphql', '/healthz'), { agent: false }, (response) => {
      response.resume();
      resolve(true);
    });
    request.on('error', () => resolve(false));
  });

const QUERY = '{ product(productId: "tent-2p") { name } }';
let held: ReturnType<typeof gate> | undefined;
let server: TestServer | undefined;
afterEach(async () => {
  held?.release();
  await server?.stop();
  server = undefined;
});

describe('stopping the HTTP server', () => {
  it('refuses new connections at once and lets a request in flight finish', async () => {
    held = gate();
    server = await startTestServer({ configureClient: held.install, shutdownGraceMs: 60_000 });
    held.arm();
    const { url } = server;
    const inFlight = post(url, new http.Agent({ keepAlive: true }), QUERY);
    await held.waiting;
    const stopped = server.stop();
    server = undefined;
    expect(await accepts(url)).toBe(false);
    held.release();
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ data: { product: null } });
    // The keep-alive connection the answer left idle does not hold the stop for the grace period.
    await stopped;
  });

  it('does not wait for an idle keep-alive connection', async () => {
    server = await startTestServer({ shutdownGraceMs: 60_000 });
    const agent = new http.Agent({ keepAlive: true });
    expect((await post(server.url, agent, '{ __typename }')).status).toBe(200);
    expect(agent.freeSockets).not.toEqual({});
    const stopped = server.stop();
    server = undefined;
    await stopped;
  });

  it('closes a request still busy once the grace period has passed', async () => {
    held = gate();
    server = await startTestServer({ configureClient: held.install, shutdownGraceMs: 200 });
    held.arm();
    const inFlight = post(server.url, new http.Agent({ keepAlive: true }), QUERY);
    await held.waiting;
    const stopped = server.stop();
    server = undefined;
    await expect(inFlight).rejects.toThrow(/socket hang up|ECONNRESET/);
    await stopped;
  });
});
