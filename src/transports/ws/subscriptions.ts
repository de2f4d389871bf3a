/**
 * GraphQL over WebSocket (the graphql-ws protocol) on the same HTTP server and path as
 * queries (/graphql): a thin adapter over the pipeline, like HTTP and Lambda.
 *
 * - The bearer token travels in `connectionParams.authorization`; a refused token closes the
 *   socket with 4401 and the reason ("Unauthorized: The token has expired") before any
 *   operation runs, and so does the token's `exp` later on. graphql-ws clients treat 4401 as
 *   final (they retry graphql-ws's default 4403 five times).
 * - Every operation goes through the admission (the same limits, rules and codes as HTTP); a
 *   message larger than MAX_BODY_BYTES closes the socket (1009) before it is even parsed.
 * - Each operation, and each event of a subscription, executes with a fresh context (execution.ts);
 *   results and errors leave through the reporter (masking, cost, log line, metrics).
 * - Bounds: sockets per server, operations per socket, an idle timeout after connection_init,
 *   keep-alive pings that drop dead peers, and what one client may hold (clientBounds.ts): its
 *   sockets (429 at the upgrade for an address over its bound, 1008 at connection_init for a
 *   user over it) and its subscriptions (TOO_MANY_OPERATIONS).
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { GraphQLError, OperationTypeNode } from 'graphql';
import { CloseCode } from 'graphql-ws';
import type { Context } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Extra } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import type { Viewer } from '../../auth/tokens.js';
import type { WebSocketLimits } from '../../config/index.js';
import { ErrorCode } from '../../errors.js';
import type { GraphQLContext } from '../../graphql/context.js';
import { ClientLimitError } from '../../pipeline/clientBounds.js';
import type { ClientBounds } from '../../pipeline/clientBounds.js';
import { hasExpired } from '../../pipeline/execution.js';
import { operationRequestOf } from '../../pipeline/operationRequest.js';
import type { Pipeline } from '../../pipeline/pipeline.js';
import { createSocketHolds } from './socketHolds.js';

export interface SubscriptionOptions {
  httpServer: http.Server;
  pipeline: Pipeline;
  websocket: WebSocketLimits;
  /** What one client may hold open, shared with the SSE transport (pipeline/clientBounds.ts). */
  clients: ClientBounds;
  /** The address of the client that sent a request (TRUST_PROXY_HOPS applied). */
  addressOf: (req: http.IncomingMessage) => string;
  /** Refuses an upgrade (403) before the handshake, e.g. from a browser origin not allowed. */
  verifyUpgrade?: (req: http.IncomingMessage) => boolean;
}

/** Close codes a client may see besides graphql-ws's own. */
export const IDLE_CLOSE_CODE = 4000;
/** WebSocket's own code for a policy refusal: a client over its connection bound. */
export const POLICY_VIOLATION = 1008;
/** setTimeout's limit (about 24.8 days); a later `exp` is re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface SocketState {
  viewer: Viewer | null;
  /** The client the bounds count this socket's holds under (clientBounds.ts `clientOf`). */
  client: string;
  connectionId: string;
  /** Operation names by operation id, for the log line and metrics. */
  operationNames: Map<string, string | null>;
  /** When each operation reached admission (performance.now()): its reported duration starts there. */
  startedAt: Map<string, number>;
  expiry?: NodeJS.Timeout | undefined;
  idle?: NodeJS.Timeout | undefined;
}

type SocketContext = Context<Record<string, unknown> | undefined, Extra>;

/** A WebSocket close reason is at most 123 bytes. */
export const closeReason = (prefix: string, message: string): string =>
  Buffer.from(`${prefix}: ${message}`)
    .subarray(0, 123)
    .toString()
    .replace(/\uFFFD$/, '');

/**
 * The token of `connection_init`: `authorization` (or `Authorization`) at the top, or under
 * `headers` as clients that reuse their HTTP headers put it. A value that is not a string is
 * refused (4401), never read as anonymous.
 */
export const authorizationOf = (params: Readonly<Record<string, unknown>> | undefined): string | undefined => {
  const headers = params?.headers;
  const nested =
    typeof headers === 'object' && headers !== null
      ? ((headers as Record<string, unknown>).authorization ?? (headers as Record<string, unknown>).Authorization)
      : undefined;
  const value = params?.authorization ?? params?.Authorization ?? nested;
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : 'invalid';
};

export function serveSubscriptions({
  httpServer,
  pipeline,
  websocket,
  clients,
  addressOf,
  verifyUpgrade = () => true,
}: SubscriptionOptions) {
  const { admission, execution, reporter } = pipeline;
  const holds = createSocketHolds(clients, addressOf);
  const wsServer = new WebSocketServer({
    server: httpServer,
    path: '/graphql',
    // One message may be as large as one HTTP request body, no larger (ws closes with 1009).
    maxPayload: pipeline.limits.maxBodyBytes,
    verifyClient: ({ req }, accept) => {
      if (!verifyUpgrade(req)) return accept(false, 403, 'Origin not allowed');
      if (wsServer.clients.size >= websocket.maxSockets) return accept(false, 503, 'Too many connections');
      const refused = holds.upgrade(req);
      return refused ? accept(false, 429, 'Too many connections from this client') : accept(true);
    },
  });
  const states = new WeakMap<WebSocket, SocketState>();
  const stateOf = (ctx: SocketContext) => states.get(ctx.extra.socket);

  /** Closes the socket once it has run no operation for `idleTimeoutMs`. */
  const armIdle = (ctx: SocketContext, state: SocketState) => {
    clearTimeout(state.idle);
    state.idle = setTimeout(() => {
      if (Object.keys(ctx.subscriptions).length === 0) ctx.extra.socket.close(IDLE_CLOSE_CODE, 'Idle timeout');
    }, websocket.idleTimeoutMs);
    state.idle.unref();
  };

  /** At the token's `exp` the socket closes (4401): no event reaches an expired viewer. */
  const armExpiry = (ctx: SocketContext, state: SocketState) => {
    const expiresAt = state.viewer?.expiresAt;
    if (expiresAt === undefined) return;
    const wait = Math.min(Math.max(expiresAt * 1000 - Date.now(), 0), MAX_TIMER_MS);
    state.expiry = setTimeout(() => {
      if (hasExpired(state.viewer))
        ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized: The token has expired');
      else armExpiry(ctx, state);
    }, wait);
    state.expiry.unref();
  };

  const operationNameOf = (ctx: SocketContext, id: string): string | null =>
    stateOf(ctx)?.operationNames.get(id) ?? null;

  const server = useServer(
    {
      schema: pipeline.schema,
      connectionInitWaitTimeout: websocket.connectionInitTimeoutMs,
      onConnect: async (ctx) => {
        let viewer: Viewer | null;
        try {
          viewer = await execution.viewer(authorizationOf(ctx.connectionParams));
        } catch (error) {
          if (!(error instanceof GraphQLError) || error.extensions.code !== ErrorCode.UNAUTHENTICATED) throw error;
          // 4401 (not graphql-ws's default 4403, which clients retry): the token will not get better.
          ctx.extra.socket.close(CloseCode.Unauthorized, closeReason('Unauthorized', error.message));
          return false;
        }
        if (hasExpired(viewer)) {
          ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized: The token has expired');
          return false;
        }
        // From here on the socket counts against its user, wherever it connects from.
        const signedIn = holds.signIn(ctx.extra.request, viewer);
        if (signedIn instanceof ClientLimitError) {
          // 1008 (policy violation): graphql-ws clients do not retry it.
          ctx.extra.socket.close(POLICY_VIOLATION, closeReason('Too many connections', signedIn.message));
          return false;
        }
        const state: SocketState = {
          viewer,
          client: signedIn.client,
          connectionId: randomUUID(),
          operationNames: new Map(),
          startedAt: new Map(),
        };
        states.set(ctx.extra.socket, state);
        armExpiry(ctx, state);
        armIdle(ctx, state);
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        const state = stateOf(ctx);
        if (!state) return [new GraphQLError('The connection is not initialised')];
        clearTimeout(state.idle);
        // graphql-ws registers the operation before calling this hook: it counts itself.
        if (Object.keys(ctx.subscriptions).length > websocket.maxOperationsPerSocket) {
          return [
            new GraphQLError(
              `A connection may run at most ${websocket.maxOperationsPerSocket} operations at once: complete one first`,
              { extensions: { code: ErrorCode.TOO_MANY_OPERATIONS } },
            ),
          ];
        }
        state.startedAt.set(id, performance.now());
        // A document id travels in extensions or beside the query, as over HTTP.
        const verdict = await admission.admit(operationRequestOf(payload), 'ws');
        if (!verdict.ok) return verdict.errors;
        const contextValue: GraphQLContext = execution.context(state.viewer, `${state.connectionId}:${id}`);
        if (verdict.operation.operation === OperationTypeNode.SUBSCRIPTION) {
          // Released when its events end (onOperation), else when the socket closes.
          const refused = holds.subscribe(ctx.extra.request, state.client, contextValue);
          if (refused) return [refused];
        }
        state.operationNames.set(id, verdict.operationName);
        return {
          schema: pipeline.schema,
          document: verdict.document,
          operationName: verdict.operationName,
          variableValues: verdict.variables,
          contextValue,
        };
      },
      execute: (args) => execution.execute(args),
      subscribe: (args) => execution.subscribe(args),
      onOperation: (_ctx, _id, _payload, args, result) => holds.opened(args.contextValue as object, result),
      onNext: (ctx, id, _payload, args, result) =>
        reporter.finishResult(result, {
          transport: 'ws',
          operationName: operationNameOf(ctx, id),
          measurement: execution.measurementOf(result),
          viewerRole: stateOf(ctx)?.viewer?.role,
          log: (args.contextValue as GraphQLContext | undefined)?.log,
          // A subscription event is timed by its execution (the measurement).
          startedAt: execution.eventOf(result) === undefined ? stateOf(ctx)?.startedAt.get(id) : undefined,
        }),
      onError: (ctx, id, _payload, errors) => {
        const startedAt = stateOf(ctx)?.startedAt.get(id);
        // A refused operation never completes: forget it here.
        stateOf(ctx)?.startedAt.delete(id);
        return reporter.finishErrors(errors, { transport: 'ws', operationName: operationNameOf(ctx, id), startedAt });
      },
      onComplete: (ctx, id) => {
        const state = stateOf(ctx);
        state?.operationNames.delete(id);
        state?.startedAt.delete(id);
        // The hook runs before graphql-ws forgets the operation: arm once it has.
        if (state) setImmediate(() => Object.keys(ctx.subscriptions).length === 0 && armIdle(ctx, state));
      },
      onClose: (ctx) => {
        const state = stateOf(ctx);
        clearTimeout(state?.expiry);
        clearTimeout(state?.idle);
      },
    },
    wsServer,
    // graphql-ws pings every socket this often and drops one that did not answer the last ping.
    websocket.keepAliveMs,
  );
  // graphql-ws prints every socket error to the console. An oversized or malformed frame is the
  // client's doing and ws closes that socket itself (1009, 1002): one debug line says so.
  // Registered after useServer's own listener, so it replaces that one.
  wsServer.on('connection', (socket) => {
    socket.removeAllListeners('error');
    socket.on('error', (error) => pipeline.log.debug({ err: error }, 'WebSocket closed on a protocol error'));
  });
  return { dispose: () => server.dispose() };
}
