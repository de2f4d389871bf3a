/**
 * The one harness for "one request over every transport the server offers": HTTP POST, a
 * WebSocket (graphql-ws protocol, spoken by hand so that close codes and raw messages stay
 * visible), GraphQL over SSE and the Lambda handler with an API Gateway v2 event. Each answers
 * the same `Outcome`, so one table of cases runs over all of them with `describe.each(TRANSPORTS)`.
 */
import type { Context } from 'aws-lambda';
import WebSocket from 'ws';
import { loadGraphQLLambdaConfig } from '../../src/config/index.js';
import type { GraphQLLambdaConfig } from '../../src/config/index.js';
import { createDynamo } from '../../src/db/client.js';
import { createGraphQLHandler } from '../../src/lambda/graphql.js';
import { apiGatewayEvent, apiGatewayGetEvent, searchOf } from './apiGatewayEvents.js';
import type { WireRequest } from './apiGatewayEvents.js';
import { endpoint, startTestServer, TEST_AUTH, TEST_CURSOR_SECRET, tokenFor } from './harness.js';

export { apiGatewayEvent, apiGatewayGetEvent, searchOf };
export type { WireRequest };
import type { TestServer, TestServerOptions } from './harness.js';

export const TRANSPORTS = ['HTTP', 'WebSocket', 'SSE', 'Lambda'] as const;
export type TransportName = (typeof TRANSPORTS)[number];

export interface Outcome {
  /** HTTP status (HTTP, Lambda); null over WebSocket. */
  status: number | null;
  data?: unknown;
  errors: { message: string; extensions?: Record<string, unknown> }[];
  /** The answer's extensions (the request's DynamoDB cost among them). */
  extensions?: { cost?: { dynamodb: { requests: number; readCapacityUnits: number; writeCapacityUnits: number } } };
  /** Set when the server closed the WebSocket instead of answering. */
  closeCode?: number;
  /** Everything the client received, for "names nothing internal" checks. */
  raw: string;
}

export const codesOf = (outcome: Outcome): unknown[] => outcome.errors.map((error) => error.extensions?.code);

/** ws closes a frame over maxPayload with 1009 (Message Too Big) before reading it. */
const CLOSE_CODE_MEANING: Record<number, string> = { 1009: 'PAYLOAD_TOO_LARGE' };

type WsMessage = { type: string; id?: string; payload?: unknown };

/**
 * A WebSocket speaking graphql-ws by hand: every message and the close code in arrival order,
 * awaited one by one (`next`), so a test sees exactly what the server sent.
 */
export class RawSocket {
  readonly received: string[] = [];
  private readonly queue: (WsMessage | { closed: number })[] = [];
  private wake: (() => void) | undefined;
  readonly closed: Promise<number>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: Buffer) => {
      this.received.push(data.toString());
      this.push(JSON.parse(data.toString()) as WsMessage);
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code) => {
        this.push({ closed: code });
        resolve(code);
      }),
    );
    socket.on('error', () => undefined); // the close event reports it
  }

  /** A RawSocket over a socket the caller opened (with headers of its own, say). */
  static wrap(socket: WebSocket): RawSocket {
    return new RawSocket(socket);
  }

  /** Opens a socket and, unless `init` is false, sends connection_init with `token`. */
  static async open(url: string, token?: string, { init = true } = {}): Promise<RawSocket> {
    const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const raw = new RawSocket(socket);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    if (init) raw.send({ type: 'connection_init', payload: token ? { authorization: `Bearer ${token}` } : {} });
    return raw;
  }

  private push(item: WsMessage | { closed: number }) {
    this.queue.push(item);
    this.wake?.();
  }

  send(message: WsMessage): void {
    this.socket.send(JSON.stringify(message));
  }

  /** The protocol requires a `query` string: a persisted document goes with an empty one. */
  subscribe(id: string, request: WireRequest): void {
    this.send({ id, type: 'subscribe', payload: { query: '', ...request } });
  }

  async next(): Promise<WsMessage | { closed: number }> {
    while (this.queue.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    return this.queue.shift()!;
  }

  close(): void {
    this.socket.close();
  }
}

export async function overWebSocket(url: string, request: WireRequest, token?: string): Promise<Outcome> {
  const socket = await RawSocket.open(url, token);
  const closedWith = (code: number): Outcome => ({
    status: null,
    closeCode: code,
    errors: CLOSE_CODE_MEANING[code]
      ? [{ message: `closed ${code}`, extensions: { code: CLOSE_CODE_MEANING[code] } }]
      : [],
    raw: socket.received.join('\n'),
  });
  const ack = await socket.next();
  if ('closed' in ack) return closedWith(ack.closed);
  socket.subscribe('1', request);
  const outcome: Outcome = { status: null, errors: [], raw: '' };
  for (;;) {
    const message = await socket.next();
    if ('closed' in message) return closedWith(message.closed);
    if (message.type === 'next') {
      const payload = message.payload as Pick<Outcome, 'data' | 'errors' | 'extensions'>;
      outcome.data = payload.data;
      outcome.errors.push(...(payload.errors ?? []));
      if (payload.extensions) outcome.extensions = payload.extensions;
    } else if (message.type === 'error') {
      outcome.errors.push(...(message.payload as Outcome['errors']));
      break;
    } else if (message.type === 'complete') break;
  }
  socket.close();
  return { ...outcome, raw: socket.received.join('\n') };
}

/** One Server-Sent Event as graphql-sse writes it. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** Parses a text/event-stream body (comments and unknown fields skipped). */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split('\n\n')) {
    const event: SseEvent = { event: '', data: '' };
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const field = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') event.id = value;
      else if (field === 'event') event.event = value;
      else if (field === 'data') event.data = event.data ? `${event.data}\n${value}` : value;
    }
    if (event.event) events.push(event);
  }
  return events;
}

/** One operation over GraphQL over SSE (distinct connections mode): every `next` until `complete`. */
export async function overSse(
  url: string,
  request: WireRequest,
  token?: string,
  { method = 'POST', headers = {} }: SendOptions = {},
): Promise<Outcome> {
  const response = await fetch(method === 'GET' ? `${url}/stream?${searchOf(request)}` : `${url}/stream`, {
    method,
    headers: {
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      accept: 'text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    ...(method === 'POST' ? { body: JSON.stringify(request) } : {}),
  });
  const raw = await response.text();
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return answered(response.status, raw);
  }
  const outcome: Outcome = { status: response.status, errors: [], raw };
  for (const event of parseSse(raw)) {
    if (event.event !== 'next') continue;
    const payload = JSON.parse(event.data) as Pick<Outcome, 'data' | 'errors' | 'extensions'>;
    outcome.data = payload.data;
    outcome.errors.push(...(payload.errors ?? []));
    if (payload.extensions) outcome.extensions = payload.extensions;
  }
  return outcome;
}

/** An HTTP or Lambda answer: its JSON body as an Outcome. */
function answered(status: number, raw: string): Outcome {
  const parsed = JSON.parse(raw) as Omit<Outcome, 'status' | 'raw'>;
  return {
    status,
    data: parsed.data,
    errors: parsed.errors ?? [],
    ...(parsed.extensions ? { extensions: parsed.extensions } : {}),
    raw,
  };
}

export type TransportOptions = Pick<
  TestServerOptions,
  'introspection' | 'persistedOnly' | 'limits' | 'configureClient' | 'executor'
>;

/** How an HTTP-borne transport sends (WebSocket ignores it): POST unless told, with extra headers. */
export interface SendOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
}

/** Sends one request over a transport; `token` is an admin's unless given, and null sends none. */
export type SendOver = (
  transport: TransportName,
  request: WireRequest,
  token?: string | null,
  options?: SendOptions,
) => Promise<Outcome>;

export interface Transports {
  send: SendOver;
  /** Stops the Lambda handler's client (the server is the caller's). */
  stop(): void;
}

/**
 * Every transport in front of `server`: HTTP, WebSocket and SSE through it, and a Lambda handler
 * on its table with the same settings (`options` as the server was started with) and, when
 * given, the same middleware on its DynamoDB client.
 */
export async function transportsOf(server: TestServer, options: TransportOptions = {}): Promise<Transports> {
  const lambdaDynamo = createDynamo({ endpoint: endpoint(), region: 'us-east-1' });
  options.configureClient?.(lambdaDynamo.client);
  const config: GraphQLLambdaConfig = {
    ...loadGraphQLLambdaConfig({ NODE_ENV: 'test', DYNAMODB_ENDPOINT: endpoint(), TABLE_NAME: server.tableName }),
    logLevel: 'silent',
    cursorSecret: TEST_CURSOR_SECRET,
    auth: TEST_AUTH,
    introspection: options.introspection ?? true,
    persistedOnly: options.persistedOnly ?? false,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.executor ? { executor: options.executor } : {}),
  };
  const handler = createGraphQLHandler(config, { dynamo: lambdaDynamo });
  const adminToken = await tokenFor('test-admin', 'admin');
  return {
    async send(transport, request, given, options = {}) {
      const token = given === null ? undefined : (given ?? adminToken);
      const headers: Record<string, string> = {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...options.headers,
      };
      const body = JSON.stringify(request);
      const get = options.method === 'GET';
      if (transport === 'WebSocket') return overWebSocket(server.url, request, token);
      if (transport === 'SSE') return overSse(server.url, request, token, options);
      if (transport === 'HTTP') {
        const response = get
          ? await fetch(`${server.url}?${searchOf(request)}`, { headers })
          : await fetch(server.url, {
              method: 'POST',
              headers: { 'content-type': 'application/json', ...headers },
              body,
            });
        return answered(response.status, await response.text());
      }
      const event = get ? apiGatewayGetEvent(request, headers) : apiGatewayEvent(body, headers);
      const result = await handler(event, {} as Context);
      return answered(result.statusCode ?? 200, result.body ?? '');
    },
    stop: () => lambdaDynamo.client.destroy(),
  };
}

export interface TransportServer {
  server: TestServer;
  send: SendOver;
  stop(): Promise<void>;
}

/** A test server (which carries the WebSocket and SSE too) and a Lambda handler on its table, with the same settings. */
export async function startTransportServer(options: TransportOptions = {}): Promise<TransportServer> {
  const server = await startTestServer({ playground: false, ...options });
  const transports = await transportsOf(server, options);
  return {
    server,
    send: transports.send,
    async stop() {
      transports.stop();
      await server.stop();
    },
  };
}
