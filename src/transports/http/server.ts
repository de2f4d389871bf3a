/**
 * The one node:http server of the API: a route table, nothing else. /graphql (POST, GET, the
 * playground for browsers, the WebSocket upgrade), /graphql/stream (SSE), /healthz, /readyz,
 * /metrics and the playground's assets. It binds sockets and bounds them (timeouts, connection
 * cap); what a request means is the runtime's (src/runtime.ts) and the pipeline's.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { DEFAULT_HTTP_LIMITS, DEFAULT_SHUTDOWN_GRACE_MS, DEFAULT_WEBSOCKET_LIMITS } from '../../config/index.js';
import type { HttpLimits, WebSocketLimits } from '../../config/index.js';
import { clientAddressOf, createClientBounds } from '../../pipeline/admission/clientBounds.js';
import { registerClientBoundsMetrics } from '../../pipeline/admission/clientBoundsMetrics.js';
import type { Runtime } from '../../runtime.js';
import { traceHttpRequest } from '../../telemetry/http.js';
import { createSseHandler, SSE_PATH } from '../sse/stream.js';
import { serveSubscriptions } from '../ws/subscriptions.js';
import { corsHandler, upgradeAllowed } from './cors.js';
import { DEV_SIGN_IN_PATH, devSignInRoute } from './devSignIn.js';
import type { DevSignInOptions } from './devSignIn.js';
import type { CorsOptions } from './cors.js';
import { graphqlRoute } from './graphqlRoute.js';
import { healthRoutes } from './health.js';
import { serveMetrics, startMetricsServer } from './metricsRoute.js';
import type { MetricsAccess } from './metricsRoute.js';
import { ASSET_PATH, playgroundHandlers, wantsPlayground } from './playground/router.js';
import { sendJson } from './send.js';

export interface HttpServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Socket limits (defaults: the HTTP_* and MAX_CONNECTIONS defaults of the spec). */
  http?: Partial<HttpLimits> | undefined;
  /** Bounds of the WebSocket and SSE transports (sockets, operations per socket, per client, idle time, pings). */
  websocket?: WebSocketLimits | undefined;
  /** Proxies in front that append to X-Forwarded-For (TRUST_PROXY_HOPS; default 0: the socket's peer). */
  trustProxyHops?: number | undefined;
  /** Serve GraphiQL to browsers at GET /graphql (default true); `defaultHeaders` pre-fills its headers editor. */
  playground?: boolean | { defaultHeaders: Record<string, string> } | undefined;
  /** Browser origins allowed to call /graphql (CORS) and to open its WebSocket; default none. */
  cors?: CorsOptions | undefined;
  /** Who may read /metrics, and on which port (default: this server's). */
  metrics?: (MetricsAccess & { port?: number | undefined }) | undefined;
  /** How long a shutdown waits for in-flight requests before closing their connections. */
  shutdownGraceMs?: number | undefined;
  /** The development sign-in at /auth/dev/token (DEV_SIGN_IN); absent: no such route. */
  devSignIn?: DevSignInOptions | undefined;
}

export interface RunningServer {
  /** e.g. http://127.0.0.1:4000/graphql */
  url: string;
  port: number;
  /** The port of the separate /metrics server, when METRICS_PORT asked for one. */
  metricsPort: number | undefined;
  /**
   * Ends subscriptions and streams, stops accepting connections, lets in-flight requests finish
   * (at most `shutdownGraceMs`), then resolves. The runtime is the caller's to stop after.
   */
  close(): Promise<void>;
}

/** Thrown when the port is taken; main prints its message as the one line a user sees. */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
}

const portInUse = (port: number) =>
  new PortInUseError(`Port ${port} is already in use: stop what holds it or set PORT to another port`);

/** Binds and releases `port` to check that start-up will be able to listen on it. */
export function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? portInUse(port) : error),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

type Route = (req: http.IncomingMessage, res: http.ServerResponse, search: string) => Promise<void> | void;

export async function serveHttp(
  runtime: Runtime,
  {
    host,
    port,
    http: httpLimits = {},
    websocket = DEFAULT_WEBSOCKET_LIMITS,
    playground = true,
    cors = { origins: [], allowLocalhost: false },
    metrics: metricsAccess = {},
    shutdownGraceMs = DEFAULT_SHUTDOWN_GRACE_MS,
    trustProxyHops = 0,
    devSignIn,
  }: HttpServerOptions,
): Promise<RunningServer> {
  const { pipeline, log } = runtime;
  const limits = { ...DEFAULT_HTTP_LIMITS, ...httpLimits };
  const withCors = corsHandler(cors);
  const graphql = graphqlRoute(runtime);
  // One set of per-client bounds for both streaming transports.
  const clients = createClientBounds(websocket);
  const addressOf = (req: http.IncomingMessage) =>
    clientAddressOf(req.socket.remoteAddress, req.headers['x-forwarded-for'], trustProxyHops);
  if (runtime.metrics) registerClientBoundsMetrics(runtime.metrics.registry, clients);
  const sse = createSseHandler({ pipeline, websocket, clients, addressOf });
  const health = healthRoutes(runtime.data.dynamo.client, runtime.data.tableName, {
    eventBus: () => runtime.events.bus.health(),
  });
  const servedMetrics =
    runtime.metrics && metricsAccess.port === undefined
      ? serveMetrics(runtime.metrics.registry, metricsAccess)
      : undefined;
  const page = playground
    ? playgroundHandlers({
        endpoint: '/graphql',
        log,
        defaultHeaders: typeof playground === 'object' ? playground.defaultHeaders : {},
      })
    : undefined;

  const signIn = devSignIn && devSignInRoute(devSignIn, (authorization) => pipeline.execution.viewer(authorization));

  const getOnly =
    (route: Route): Route =>
    (req, res, search) =>
      req.method === 'GET' || req.method === 'HEAD' ? route(req, res, search) : notFound(req, res);
  const notFound = (req: http.IncomingMessage, res: http.ServerResponse) =>
    sendJson(req, res, 404, { error: 'Not found' });
  const routes = new Map<string, Route>([
    [
      '/graphql',
      (req, res, search) => {
        // The HTTP server span first, so that it covers the whole request (nothing while tracing is off).
        traceHttpRequest(req, res, '/graphql');
        withCors(req, res, () => {
          const answer =
            page && req.method === 'GET' && wantsPlayground(req, new URLSearchParams(search))
              ? page.page(req, res)
              : graphql(req, res, search);
          answer.catch((error: unknown) => failed(req, res, error));
        });
      },
    ],
    [SSE_PATH, (req, res) => withCors(req, res, () => sse.handler(req, res))],
    ...(signIn
      ? [
          [
            DEV_SIGN_IN_PATH,
            (req, res) =>
              withCors(req, res, () => void signIn(req, res).catch((error: unknown) => failed(req, res, error))),
          ] as [string, Route],
        ]
      : []),
    ['/healthz', getOnly(health.healthz)],
    ['/readyz', getOnly(health.readyz)],
    ...(servedMetrics ? [['/metrics', getOnly(servedMetrics)] as [string, Route]] : []),
  ]);

  const failed = (req: http.IncomingMessage, res: http.ServerResponse, error: unknown) => {
    log.error({ err: error }, 'unexpected HTTP error');
    if (res.headersSent) return void res.destroy();
    void sendJson(req, res, 500, {
      errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
    });
  };

  const inFlight = new Set<http.ServerResponse>();
  let closing: Promise<void> | undefined;
  const server = http.createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // How often Node looks for requests past those timeouts (its default, 30 s, would let a
      // stalled client hold its socket for up to a minute).
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    },
    (req, res) => {
      const url = req.url ?? '/';
      const queryAt = url.indexOf('?');
      const path = queryAt === -1 ? url : url.slice(0, queryAt);
      const search = queryAt === -1 ? '' : url.slice(queryAt);
      // Paths match as Express matched them: case-insensitive, one trailing slash allowed.
      const key = (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase();
      if (closing) res.setHeader('connection', 'close');
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
      const route =
        routes.get(key) ??
        (page && key.startsWith(`${ASSET_PATH}/`)
          ? (rq: http.IncomingMessage, rs: http.ServerResponse) => page.asset(rq, rs, path.slice(ASSET_PATH.length + 1))
          : notFound);
      try {
        const answered = route(req, res, search);
        if (answered) answered.catch((error: unknown) => failed(req, res, error));
      } catch (error) {
        failed(req, res, error);
      }
    },
  );
  server.maxConnections = limits.maxConnections;
  const subscriptions = serveSubscriptions({
    httpServer: server,
    pipeline,
    websocket,
    clients,
    addressOf,
    verifyUpgrade: (req) => upgradeAllowed(req, cors),
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? portInUse(port) : error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await subscriptions.dispose();
    throw error;
  });
  const metricsServer =
    runtime.metrics && metricsAccess.port !== undefined
      ? await startMetricsServer(runtime.metrics, metricsAccess, host, metricsAccess.port).catch(
          async (error: unknown) => {
            await subscriptions.dispose();
            await new Promise((resolve) => server.close(resolve));
            throw error;
          },
        )
      : undefined;

  async function close(): Promise<void> {
    // No new connection from here on (synchronously: the caller may count on it).
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Subscriptions and streams end next: their sockets would hold the server open.
    sse.dispose();
    await subscriptions.dispose();
    // A response finished after this leaves its keep-alive connection idle: close that too.
    for (const res of inFlight) {
      if (!res.headersSent) res.setHeader('connection', 'close');
      res.once('finish', () => setImmediate(() => server.closeIdleConnections()));
    }
    server.closeIdleConnections();
    const grace = setTimeout(() => server.closeAllConnections(), shutdownGraceMs);
    grace.unref();
    await closed;
    clearTimeout(grace);
    if (metricsServer) {
      metricsServer.closeAllConnections();
      await new Promise((resolve) => metricsServer.close(resolve));
    }
  }

  const actualPort = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    url: `http://${shownHost}:${actualPort}/graphql`,
    port: actualPort,
    metricsPort: metricsServer ? (metricsServer.address() as AddressInfo).port : undefined,
    close: () => (closing ??= close()),
  };
}
