/**
 * The server as main.ts builds it, for tests: `createRuntime` then `serveHttp` over it, with one
 * `stop()` that closes the HTTP server first and the runtime after. No vitest import: the
 * child-process scripts of test/support use it too.
 */
import { createRuntime } from '../../src/runtime.js';
import type { Runtime, RuntimeOptions } from '../../src/runtime.js';
import { inProcessConsumer } from '../../src/runtimeConsumer.js';
import type { InProcessConsumerOptions } from '../../src/runtimeConsumer.js';
import { serveHttp } from '../../src/transports/http/server.js';
import type { HttpServerOptions } from '../../src/transports/http/server.js';

export type AppOptions = RuntimeOptions &
  Omit<HttpServerOptions, 'host' | 'port'> & {
    host?: string;
    port?: number;
    /** Run the in-process stream consumer (runtimeConsumer.ts). */
    streams?: InProcessConsumerOptions;
  };

export interface RunningApp extends Runtime {
  /** e.g. http://127.0.0.1:4000/graphql */
  url: string;
  port: number;
  metricsPort: number | undefined;
}

export async function startApp({
  host = '127.0.0.1',
  port = 0,
  http,
  websocket,
  playground,
  cors,
  metrics,
  shutdownGraceMs,
  trustProxyHops,
  devSignIn,
  streams,
  ...runtimeOptions
}: AppOptions): Promise<RunningApp> {
  const runtime = await createRuntime({
    ...runtimeOptions,
    ...(streams ? { consumer: inProcessConsumer(streams) } : {}),
  });
  const server = await serveHttp(runtime, {
    host,
    port,
    http,
    websocket,
    playground,
    cors,
    metrics,
    shutdownGraceMs,
    trustProxyHops,
    devSignIn,
  }).catch(async (error: unknown) => {
    await runtime.stop();
    throw error;
  });
  return {
    ...runtime,
    url: server.url,
    port: server.port,
    metricsPort: server.metricsPort,
    stop: async () => {
      await server.close();
      await runtime.stop();
    },
  };
}
