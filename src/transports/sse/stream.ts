/**
 * GraphQL over Server-Sent Events at /graphql/stream: the graphql-sse protocol's "distinct
 * connections" mode (one operation per request, its results as `next` events, then `complete`),
 * for proxies and front doors that speak only HTTP/1. A thin adapter over the pipeline, like
 * WebSocket: the same admission, viewer, execution, masking, cost, log line and metrics.
 *
 * - Request: POST with a JSON body (`query` or a document id, `variables`, `operationName`,
 *   `extensions`) or GET with the same as parameters, `Accept: text/event-stream`; the token in
 *   `Authorization`. It is read by GraphQL over HTTP's reader (pipeline/http/graphqlHttp.ts) and
 *   served by the request core (pipeline/serve.ts) like any other. A refusal before the stream
 *   answers with JSON and the HTTP status of the other transports (400, 401, 413, 503).
 * - Every event of a subscription carries `id: <seq>`, the stream record's sequence number. A
 *   client that reconnects with `Last-Event-ID` first receives the held events after it (a
 *   bounded buffer, EventFanOut); when the buffer no longer reaches back that far, the first
 *   message is a `next` with an `EVENTS_MISSED` error: refetch, the stream then goes on live.
 * - Bounds: streams per server (the WebSocket socket bound), the streams and subscriptions of
 *   one client (clientBounds.ts, shared with WebSocket: 429 TOO_MANY_CONNECTIONS or
 *   TOO_MANY_OPERATIONS), the body limit, a comment line every keep-alive interval (drops dead
 *   peers), the end of the stream at the token's `exp`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError } from 'graphql';
import type { GraphQLFormattedError } from 'graphql';
import type { Viewer } from '../../auth/tokens.js';
import type { WebSocketLimits } from '../../config/index.js';
import { ErrorCode } from '../../errors.js';
import type { ChangeEvent } from '../../events/changeEvent.js';
import { SEQ_PATTERN } from '../../graphql/eventFanOut.js';
import { ClientLimitError, clientOf } from '../../pipeline/admission/clientBounds.js';
import type { ClientBounds } from '../../pipeline/admission/clientBounds.js';
import { hasExpired } from '../../pipeline/execution/execution.js';
import { readGraphQLHttpRequest, requestIdOf } from '../../pipeline/http/graphqlHttp.js';
import type { Pipeline } from '../../pipeline/pipeline.js';
import { EventsEnded } from '../../pipeline/serve.js';
import type { Events } from '../../pipeline/serve.js';
import type { Answer } from '../../pipeline/report/answer.js';
import { atExpiry } from '../../pipeline/execution/viewerExpiry.js';

export const SSE_PATH = '/graphql/stream';

export interface SseOptions {
  pipeline: Pipeline;
  websocket: WebSocketLimits;
  /** What one client may hold open, shared with the WebSocket transport (pipeline/admission/clientBounds.ts). */
  clients: ClientBounds;
  /** The address of the client that sent a request (TRUST_PROXY_HOPS applied). */
  addressOf: (req: IncomingMessage) => string;
}

const answerJson = (res: ServerResponse, status: number, body: string, headers: Iterable<[string, string]> = []) => {
  if (res.headersSent) return;
  res.writeHead(status, {
    ...Object.fromEntries(headers),
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'private, no-store',
  });
  res.end(body);
};

const coded = (message: string, code: string, status: number) =>
  new GraphQLError(message, { extensions: { code, http: { status } } });

export function createSseHandler({ pipeline, websocket, clients, addressOf }: SseOptions) {
  const { execution, reporter } = pipeline;
  let open = 0;
  const streams = new Set<() => void>();

  /** A refusal before the stream: reported, then answered as JSON. */
  const refuse = (res: ServerResponse, status: number, error: GraphQLError, requestId: string) => {
    const refused = reporter.refuse([error], status, {
      transport: 'sse',
      operationName: null,
      startedAt: performance.now(),
      requestId,
    });
    answerJson(res, refused.status, refused.body, refused.headers);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(',') : value;
    };
    const requestId = requestIdOf(header('x-request-id'), randomUUID());
    if (req.method !== 'GET' && req.method !== 'POST') {
      res.setHeader('allow', 'GET, POST');
      return refuse(res, 405, coded('GraphQL over SSE takes GET or POST', 'BAD_REQUEST', 405), requestId);
    }
    if (open >= websocket.maxSockets) {
      return refuse(res, 503, coded('Too many open streams: try again later', 'SERVICE_UNAVAILABLE', 503), requestId);
    }
    // The one reader and body limit of every HTTP transport (pipeline/http/graphqlHttp.ts).
    const read = await readGraphQLHttpRequest(
      { method: req.method, search: req.url?.split('?')[1] ?? '', body: req as AsyncIterable<Uint8Array>, header },
      pipeline.limits.maxBodyBytes,
    );
    if (read.kind === 'refused') return refuse(res, read.status, read.error, requestId);
    if (read.kind === 'edge') {
      const early = pipeline.admission.unreadable({ method: req.method, header });
      if (early?.errors[0]) return refuse(res, early.status, early.errors[0], requestId);
      const message =
        'The request is not one GraphQL operation: send a JSON object with `query` (or a document id), `variables` and `operationName`';
      return refuse(res, 400, coded(message, 'BAD_REQUEST', 400), requestId);
    }
    const lastEventId = header('last-event-id');
    if (lastEventId !== undefined && !SEQ_PATTERN.test(lastEventId)) {
      return refuse(
        res,
        400,
        coded('Last-Event-ID must be the id of an event of this stream', 'BAD_REQUEST', 400),
        requestId,
      );
    }
    let viewer: Viewer | null;
    try {
      viewer = await execution.viewer(header('authorization'));
    } catch (error) {
      if (error instanceof GraphQLError && error.extensions.code === ErrorCode.UNAUTHENTICATED) {
        return refuse(res, 401, coded(error.message, ErrorCode.UNAUTHENTICATED, 401), requestId);
      }
      throw error;
    }
    if (hasExpired(viewer)) {
      return refuse(res, 401, coded('The token has expired', ErrorCode.UNAUTHENTICATED, 401), requestId);
    }
    // The stream counts against its client from here until it has ended, however it ended.
    const client = clientOf(viewer, addressOf(req));
    const connection = clients.hold(client, 'connection');
    if (connection instanceof ClientLimitError) return refuse(res, 429, connection, requestId);
    try {
      // The subscription resumes where the client left off, here or on another instance; told
      // while it opens (before the stream starts) when what it missed is no longer held.
      let missed = false;
      const served = await pipeline.serve(
        {
          operation: read.operation,
          header,
          viewer,
          requestId,
          ...(lastEventId !== undefined ? { resume: { after: lastEventId, missed: () => (missed = true) } } : {}),
          holdSubscription: () => clients.hold(client, 'subscription'),
        },
        'sse',
      );
      if (!('events' in served) && (served.refused || served.notOpened)) {
        if (served.status === 405) res.setHeader('allow', 'POST');
        // A subscription refused while opening (FORBIDDEN, a missing order) ends before the stream, with 200.
        return answerJson(res, served.refused ? served.status : 200, served.body, served.headers);
      }
      await stream(res, served, viewer, missed);
    } finally {
      connection.release();
    }
  }

  /** Streams an answer (one `next`) or a subscription's answers until it ends. */
  async function stream(res: ServerResponse, served: Answer | Events, viewer: Viewer | null, missed: boolean) {
    open++;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'private, no-store',
      connection: 'keep-alive',
      // Proxies (nginx) must pass events on as they come.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const write = (event: 'next' | 'complete', data: string, id?: string) =>
      res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`);
    const writeErrors = (errors: GraphQLFormattedError[]) => write('next', JSON.stringify({ errors }));
    if (missed) {
      writeErrors([
        {
          message:
            'Events since Last-Event-ID are no longer held: refetch what you show; the stream goes on with new events',
          extensions: { code: ErrorCode.EVENTS_MISSED },
        },
      ]);
    }

    let ended = false;
    const iterator = 'events' in served ? served.events : undefined;
    const keepAlive = setInterval(() => res.write(':\n\n'), websocket.keepAliveMs);
    keepAlive.unref();
    let cancelExpiry = (): void => undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      open--;
      streams.delete(end);
      clearInterval(keepAlive);
      cancelExpiry();
      void iterator?.return?.(undefined);
      if (!res.writableEnded) {
        write('complete', '');
        res.end();
      }
    };
    streams.add(end);
    res.on('close', end);
    cancelExpiry = atExpiry(viewer, () => {
      writeErrors([
        {
          message: 'The token has expired: sign in again and resubscribe',
          extensions: { code: ErrorCode.UNAUTHENTICATED },
        },
      ]);
      end();
    });

    if (!iterator) {
      write('next', (served as Answer).body);
      return end();
    }
    try {
      for await (const answer of iterator) {
        if (ended) break;
        write('next', answer.body, (answer.event as ChangeEvent | undefined)?.seq);
      }
    } catch (error) {
      if (!(error instanceof EventsEnded)) throw error;
      if (!ended) write('next', error.answer.body);
    }
    end();
  }

  return {
    /** A plain node handler for SSE_PATH: it answers every request itself. */
    handler: (req: IncomingMessage, res: ServerResponse): void => {
      handle(req, res).catch((error: unknown) => {
        pipeline.log.error({ err: error }, 'SSE request failed');
        answerJson(
          res,
          500,
          JSON.stringify({
            errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
          }),
        );
      });
    },
    /** Open streams. */
    get size(): number {
      return open;
    },
    /** Ends every open stream (`complete`), e.g. before the server drains. */
    dispose(): void {
      for (const end of [...streams]) end();
    },
  };
}
