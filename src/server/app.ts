/**
 * The HTTP server: Express 5 carrying Apollo Server at /graphql (further routes such as
 * /healthz join it here; startStandaloneServer could not mount them).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import type { Logger } from 'pino';
import { currentCost, newRequestCost, runWithCost } from '../db/capacity.js';
import type { DataSources } from '../db/loaders.js';
import { createContext } from './context.js';
import type { GraphQLContext } from './context.js';
import { costPlugin } from './costPlugin.js';
import { createFormatError } from './errorMasking.js';
import { PersistedDocumentsCache, loadPersistedDocuments } from './persistedDocuments.js';
import { playgroundRouter } from './playground/router.js';
import { buildSchema } from './schema.js';

export interface AppOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  data: DataSources;
  log: Logger;
  /** Largest accepted request body. */
  bodyLimit?: string;
  /** Serve the GraphiQL playground to browsers at GET /graphql (default true). */
  playground?: boolean;
}

export interface RunningApp {
  /** e.g. http://127.0.0.1:4000/graphql */
  url: string;
  port: number;
  /** Stops accepting connections, lets in-flight requests finish, then resolves. */
  stop(): Promise<void>;
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

const requestIdOf = (header: string | string[] | undefined): string =>
  typeof header === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(header) ? header : randomUUID();

export async function startApp({
  host,
  port,
  data,
  log,
  bodyLimit = '100kb',
  playground = true,
}: AppOptions): Promise<RunningApp> {
  const app = express();
  app.disable('x-powered-by');
  const httpServer = http.createServer(app);
  const apollo = new ApolloServer<GraphQLContext>({
    schema: buildSchema(),
    plugins: [ApolloServerPluginDrainHttpServer({ httpServer }), ApolloServerPluginLandingPageDisabled(), costPlugin()],
    formatError: createFormatError(log),
    includeStacktraceInErrorResponses: false,
    persistedQueries: { cache: new PersistedDocumentsCache(loadPersistedDocuments()) },
    // main.ts owns SIGINT/SIGTERM: it stops the server, then the database, in that order.
    stopOnTerminationSignals: false,
  });
  await apollo.start();

  if (playground) app.use(playgroundRouter({ endpoint: '/graphql', log }));
  app.use(
    '/graphql',
    express.json({ limit: bodyLimit }),
    // Everything below runs inside this request's cost record (see db/capacity.ts).
    (_req, _res, next) => runWithCost(newRequestCost(), next),
    expressMiddleware(apollo, {
      context: async ({ req }) =>
        createContext(data, currentCost() ?? newRequestCost(), requestIdOf(req.headers['x-request-id']), log),
    }),
  );

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new PortInUseError(`Port ${port} is already in use: stop what holds it or set PORT to another port`)
          : error,
      );
    };
    httpServer.once('error', onError);
    httpServer.listen(port, host, () => {
      httpServer.off('error', onError);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await apollo.stop();
    throw error;
  });

  const actualPort = (httpServer.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    url: `http://${shownHost}:${actualPort}/graphql`,
    port: actualPort,
    stop: () => apollo.stop(),
  };
}
