/**
 * GraphQL over WebSocket (the graphql-ws protocol) on the same HTTP server and path as
 * queries (/graphql): a thin adapter over the pipeline, like HTTP and Lambda.
 *
 * - The bearer token travels in `connectionParams.authorization`; a refused token closes the
 *   socket with 4401 and the reason ("Unauthorized: The token has expired") before any
 *   operation runs, and so does the token's `exp` later on. graphql-ws clients treat 4401 as
 *   final (they retry graphql-ws's default 4403 five times).
 * - Every operation is served by the request core (pipeline/serve.ts: the same admission,
 *   limits, rules and codes as HTTP); a message larger than MAX_BODY_BYTES closes the socket
 *   (1009) before it is even parsed.
 * - Each operation, and each event of a subscription, executes with a fresh context and is
 *   settled by the core's report (masking, cost, log line, metrics): graphql-ws only writes the
 *   settled answers out, a refusal as an `error` message.
 * - Bounds: sockets per server, operations per socket, an idle timeout after connection_init,
 *   keep-alive pings that drop dead peers, and what one client may hold (clientBounds.ts): its
 *   sockets (429 at the upgrade for an address over its bound, 1008 at connection_init for a
 *   user over it) and its subscriptions (TOO_MANY_OPERATIONS).
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Socket } from 'node:net';
import { GraphQLError, parse } from 'graphql';
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { CloseCode } from 'graphql-ws';
import type { Context } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Extra } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import type { Viewer } from '../../auth/tokens.js';
import type { WebSocketLimits } from '../../config/index.js';
import { ErrorCode } from '../../errors.js';
import { ClientLimitError } from '../../pipeline/admission/clientBounds.js';
import type { ClientBounds } from '../../pipeline/admission/clientBounds.js';
import { hasExpired } from '../../pipeline/execution/execution.js';
import { operationRequestOf } from '../../pipeline/http/operationRequest.js';
import type { Pipeline } from '../../pipeline/pipeline.js';
import type { Answer } from '../../pipeline/report/answer.js';
import { EventsEnded } from '../../pipeline/serve.js';
import type { Events } from '../../pipeline/serve.js';
import { atExpiry } from '../../pipeline/execution/viewerExpiry.js';
import { createSocketHolds } from './socketHolds.js';
import { mapEvents } from '../../pipeline/execution/mapEvents.js';

export interface SubscriptionOptions {
  httpServer: http.Server;
  pipeline: Pipeline;
  websocket: WebSocketLimits;
  /** What one client may hold open, shared with the SSE transport (pipeline/admission/clientBounds.ts). */
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

interface SocketState {
  viewer: Viewer | null;
  /** The client the bounds count this socket's holds under (clientBounds.ts `clientOf`). */
  client: string;
  connectionId: string;
  /** The refusals of operations by id, as the core settled them: graphql-ws sends them as `error` messages. */
  refusals: Map<string, readonly GraphQLFormattedError[]>;
  cancelExpiry: () => void;
  idle?: NodeJS.Timeout | undefined;
}

/**
 * What graphql-ws is handed for an operation the core settled: the core's value, and a document
 * that only tells graphql-ws whether to expect one result or a stream of them (it looks the
 * operation's type up itself); the operation was admitted and run by the core.
 */
const ONE_RESULT = parse('query { __typename }');
const A_STREAM = parse('subscription { __typename }');
interface Settled {
  served: Answer | Events;
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

/** Sockets corked until the microtasks under way are done. */
const corked = new WeakSet<Socket>();

/**
 * Holds what is written to `socket` until the code and microtasks under way are done
 * (process.nextTick runs after them), then sends it in one write: a fan-out answers many
 * subscriptions of one socket in one go, and without this each message would be a write (a
 * system call) of its own. Not until setImmediate: on a busy loop that would hold answers ready
 * now behind every other callback of the turn.
 */
export function corkWhileAnswering(socket: Socket): void {
  if (corked.has(socket) || socket.destroyed) return;
  corked.add(socket);
  socket.cork();
  process.nextTick(() => {
    corked.delete(socket);
    socket.uncork();
  });
}

export function serveSubscriptions({
  httpServer,
  pipeline,
  websocket,
  clients,
  addressOf,
  verifyUpgrade = () => true,
}: SubscriptionOptions) {
  const { execution, reporter } = pipeline;
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
          refusals: new Map(),
          // At the token's `exp` the socket closes (4401): no event reaches an expired viewer.
          cancelExpiry: atExpiry(viewer, () =>
            ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized: The token has expired'),
          ),
        };
        states.set(ctx.extra.socket, state);
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
        // A document id travels in extensions or beside the query, as over HTTP.
        const served = await pipeline.serve(
          {
            operation: operationRequestOf(payload),
            viewer: state.viewer,
            requestId: `${state.connectionId}:${id}`,
            // Released when its events end, else when the socket closes.
            holdSubscription: () => holds.subscribe(ctx.extra.request, state.client),
          },
          'ws',
        );
        if (!('events' in served) && served.refused) {
          const errors = served.result.errors ?? [];
          state.refusals.set(id, errors);
          return errors.map((error) => new GraphQLError(error.message));
        }
        const settled: Settled = { served };
        return { schema: pipeline.schema, document: 'events' in served ? A_STREAM : ONE_RESULT, contextValue: settled };
      },
      execute: (args) => ((args.contextValue as Settled).served as Answer).result as ExecutionResult,
      subscribe: (args) =>
        mapEvents(
          ((args.contextValue as Settled).served as Events).events,
          (answer) => answer.result as ExecutionResult,
        ),
      // The answers are settled already (masked, costed, reported): sent as they are, the
      // messages answered together to one socket in one write (corkWhileAnswering).
      onNext: (ctx, _id, _payload, _args, result) => {
        corkWhileAnswering(ctx.extra.request.socket);
        return result;
      },
      onError: (ctx, id, _payload, errors) => {
        const state = stateOf(ctx);
        const refused = state?.refusals.get(id);
        state?.refusals.delete(id);
        if (refused) return refused;
        // A stream that ended on an error: its answer, settled by the core.
        const ended = errors[0]?.originalError;
        if (ended instanceof EventsEnded) return ended.answer.result.errors ?? [];
        // graphql-ws's own refusals (too many operations) are reported here.
        return (
          reporter.refuse(errors, 400, {
            transport: 'ws',
            operationName: null,
            startedAt: performance.now(),
            requestId: state ? `${state.connectionId}:${id}` : undefined,
          }).result.errors ?? []
        );
      },
      onComplete: (ctx) => {
        const state = stateOf(ctx);
        // The hook runs before graphql-ws forgets the operation: arm once it has.
        if (state) setImmediate(() => Object.keys(ctx.subscriptions).length === 0 && armIdle(ctx, state));
      },
      onClose: (ctx) => {
        const state = stateOf(ctx);
        state?.cancelExpiry();
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
